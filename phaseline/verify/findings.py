"""What ``phaseline verify`` reports: a :class:`Finding` per problem, in a :class:`VerifyReport`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str  # "error" or "warning"
    check: str
    subject: str
    detail: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    findings: tuple[Finding, ...]
    files_checked: int
    sources_checked: int

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def findings_rows(report: VerifyReport) -> list[dict[str, str]]:
    return [
        {"severity": f.severity, "check": f.check, "subject": f.subject, "detail": f.detail}
        for f in report.findings
    ]
