-- _severity: the macros that grade a figure against four limits (Low, Moderate, Severe, Critical).
--
-- Levels are integers: 0 None, 1 Low, 2 Moderate, 3 Severe, 4 Critical; NULL when the figure is
-- NULL (no data: the heuristic is skipped, never graded None).  The limits are a list of four,
-- bound from the doctor configuration (profiles/doctor.toml), as Dr. Elephant's
-- Severity.getSeverityAscending / getSeverityDescending grade theirs (app/com/linkedin/drelephant/
-- analysis/Severity.java).
--
--   _sev_asc(v, [1, 2, 4, 8])    v = 3 -> 2 (Moderate): larger is worse
--   _sev_desc(v, [8, 4, 2, 1])   v = 3 -> 2 (Moderate): smaller is worse
--   _sev_name(level)             'None', 'Low', 'Moderate', 'Severe', 'Critical'
--   _limits(t)                   '1 / 2 / 4 / 8', the limits as the threshold column shows them

CREATE OR REPLACE TEMP MACRO _sev_asc(v, t) AS
    CASE WHEN v IS NULL THEN NULL
         WHEN v >= t[4] THEN 4 WHEN v >= t[3] THEN 3 WHEN v >= t[2] THEN 2 WHEN v >= t[1] THEN 1
         ELSE 0 END;

CREATE OR REPLACE TEMP MACRO _sev_desc(v, t) AS
    CASE WHEN v IS NULL THEN NULL
         WHEN v <= t[4] THEN 4 WHEN v <= t[3] THEN 3 WHEN v <= t[2] THEN 2 WHEN v <= t[1] THEN 1
         ELSE 0 END;

CREATE OR REPLACE TEMP MACRO _sev_name(level) AS
    ['None', 'Low', 'Moderate', 'Severe', 'Critical'][level + 1];

CREATE OR REPLACE TEMP MACRO _limits(t) AS
    array_to_string(list_transform(t, lambda x: CASE WHEN x = round(x) THEN CAST(CAST(x AS BIGINT) AS VARCHAR)
                                               ELSE CAST(round(x, 4) AS VARCHAR) END), ' / ');
