"""HiTune's dataflow specification language (Dai et al. 2011, section 4.2, Figures 7 and 8).

A specification describes the dataflow graph (``Input``, ``Output``,
``Vertices`` with program locations, ``Edges``) and its resource mapping
(``Vertex Mapping``: task pools of ordered phases of thread pools and thread
group pools with cardinalities; ``Edge Mapping``: edge type and endpoint
location).  ``//`` starts a comment; ``→`` and ``->`` are the same arrow.

Program locations
-----------------
The paper leaves the syntax of a *program location* open; phaseline reads:

``location    := alternative ("or" alternative)*``
``alternative := frame ("#" frame)* ["@" thread-name-glob]``

A *frame* names a method, qualified as far as needed: ``MapTask.run``,
``SpillThread.run``, ``runNewReducer``; ``*`` matches any characters and
``(New|Old)`` alternatives (as in HiTune's own reports).  A frame matches a
stack frame ``pkg.Outer$Inner.method`` when it equals a ``.``/``$``-delimited
suffix of it (a synthetic ``$N`` suffix, as in ``access$400``, is ignored).
``A#B`` is a partial stack trace: ``A`` is called (directly or not) by ``B``.
``@glob`` restricts the alternative to threads whose name matches the glob.

Resolution: a sample belongs to the vertex whose location matches its stack
*innermost* (the matched frame nearest the top of the stack); a stack no
vertex matches is *unmapped*, one two vertices match equally deep is
*ambiguous*.  Both are reported, never guessed (HiTune requires every
execution position to map to a unique program location).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from phaseline.errors import SpecError
from phaseline.text_file import read_text_file
from profiles.dataflow.model import (
    Alternative,
    Cardinality,
    DataflowSpec,
    Edge,
    EdgeMapping,
    MatchStatus,
    Phase,
    Resolution,
    TaskPool,
    ThreadPool,
    Vertex,
    frame_regex,
)

__all__ = [
    "Alternative", "Cardinality", "DataflowSpec", "Edge", "EdgeMapping", "MatchStatus", "Phase", "Resolution",
    "TaskPool", "ThreadPool", "Vertex", "frame_regex", "load_spec", "parse_location", "parse_spec", "shipped_spec",
]

ENDPOINTS = frozenset({"intra-thread", "intra-task", "intra-node", "unconstrained"})
SECTIONS = ("input", "output", "vertices", "edges", "vertex mapping", "edge mapping")
_SECTION_RE = re.compile(r"^\s*(input|output|vertices|edges|vertex\s+mapping|edge\s+mapping)\s*\{", re.I)
_ENTRY_RE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_ARROW_RE = re.compile(r"\s*(?:→|->)\s*")
_TOKEN_RE = re.compile(r"\s*(?:(\{)|(\})|(\([^()]*\))|(,)|([^\s{}(),]+))")


def _cardinality(text: str, path: str, line: int) -> Cardinality | None:
    body = text.strip().strip("()").strip()
    m = re.fullmatch(r"(\d+)\s*(?:~\s*(\d+|∞|inf|\*|n))?", body, re.I)
    if not m:
        return None
    low = int(m.group(1))
    if m.group(2) is None:
        return Cardinality(low, low)
    high = None if not m.group(2).isdigit() else int(m.group(2))
    if high is not None and high < low:
        raise SpecError(f"{path}:{line}: cardinality {text} has its upper bound below its lower bound")
    return Cardinality(low, high)


def parse_location(text: str, path: str, line: int) -> tuple[Alternative, ...]:
    """Parse a program location (``A#B@glob or C``)."""
    alts = []
    for part in re.split(r"\s+or\s+", text.strip()):
        body, _, glob = part.partition("@")
        frames = tuple(f.strip() for f in body.split("#"))
        if not frames or any(not f or " " in f for f in frames):
            raise SpecError(f"{path}:{line}: bad program location {text!r} (expected Frame#Frame... or ...)")
        for frame in frames:  # compiled here, so that a bad one is named with its line, not met later
            try:
                frame_regex(frame)
            except re.error as exc:
                raise SpecError(f"{path}:{line}: bad frame pattern {frame!r} in {text!r}: {exc.msg}") from None
        alts.append(Alternative(frames, glob.strip() or None))
    return tuple(alts)


def _strip_comment(line: str) -> str:
    idx = line.find("//")
    return line if idx < 0 else line[:idx]


def _sections(text: str, path: str) -> dict[str, tuple[int, list[tuple[int, str]]]]:
    """Split the spec into sections: name -> (line of the header, [(line, text)...]) by brace depth."""
    lines = [_strip_comment(raw) for raw in text.splitlines()]
    found: dict[str, tuple[int, list[tuple[int, str]]]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = _SECTION_RE.match(line)
        if not m:
            raise SpecError(f"{path}:{i + 1}: expected a section ({', '.join(SECTIONS)}), got {line.strip()!r}")
        name = re.sub(r"\s+", " ", m.group(1).lower())
        if name in found:
            raise SpecError(f"{path}:{i + 1}: section {name!r} appears twice")
        start = i + 1
        depth = 0
        body: list[tuple[int, str]] = []
        rest = line[m.end() - 1 :]
        j = i
        while True:
            for k, ch in enumerate(rest):
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        inner = rest[:k]
                        if j == i:
                            inner = inner[1:]
                        body.append((j + 1, inner))
                        tail = rest[k + 1 :].strip()
                        if tail:
                            raise SpecError(f"{path}:{j + 1}: unexpected text after section end: {tail!r}")
                        break
            else:
                body.append((j + 1, rest[1:] if j == i else rest))
                j += 1
                if j >= len(lines):
                    raise SpecError(f"{path}:{start}: section {name!r} is not closed with '}}'")
                rest = lines[j]
                continue
            break
        found[name] = (start, body)
        i = j + 1
    return found


def _entries(body: list[tuple[int, str]], path: str) -> list[tuple[int, str, str]]:
    """``id: value`` entries; a value ending in (or a line starting with) ``or`` continues."""
    out: list[tuple[int, str, str]] = []
    for line_no, raw in body:
        text = raw.strip()
        if not text:
            continue
        if out and (re.search(r"\bor$", out[-1][2]) or text.startswith("or ")):
            ln, key, val = out[-1]
            out[-1] = (ln, key, f"{val} {text}")
            continue
        m = _ENTRY_RE.match(text)
        if not m:
            raise SpecError(f"{path}:{line_no}: expected 'id: value', got {text!r}")
        out.append((line_no, m.group(1), m.group(2)))
    return out


def _tokens(body: list[tuple[int, str]], path: str) -> list[tuple[int, str]]:
    toks: list[tuple[int, str]] = []
    for line_no, raw in body:
        pos = 0
        while pos < len(raw):
            if raw[pos:].strip() == "":
                break
            m = _TOKEN_RE.match(raw, pos)
            if not m or m.end() == pos:
                raise SpecError(f"{path}:{line_no}: cannot read {raw[pos:].strip()!r}")
            toks.append((line_no, m.group(0).strip()))
            pos = m.end()
    return toks


class _MappingParser:
    """Recursive descent over the Vertex Mapping tokens."""

    def __init__(self, toks: list[tuple[int, str]], path: str, header_line: int) -> None:
        self.toks, self.pos, self.path, self.last_line = toks, 0, path, header_line

    def peek(self) -> str | None:
        return self.toks[self.pos][1] if self.pos < len(self.toks) else None

    def take(self) -> tuple[int, str]:
        if self.pos >= len(self.toks):
            raise SpecError(f"{self.path}:{self.last_line}: Vertex Mapping ends too early")
        tok = self.toks[self.pos]
        self.pos += 1
        self.last_line = tok[0]
        return tok

    def expect(self, word: str) -> int:
        line, tok = self.take()
        if tok.lower() != word:
            raise SpecError(f"{self.path}:{line}: expected {word!r}, got {tok!r}")
        return line

    def keyword(self) -> str:
        words: list[str] = []
        while (tok := self.peek()) is not None and tok[0].isalpha():
            words.append(self.take()[1].lower())
        return " ".join(words)

    def groups(self, line: int) -> tuple[str | None, list[str]]:
        """Optional ``(name)`` then parenthesized cardinality groups."""
        name: str | None = None
        nums: list[str] = []
        while (tok := self.peek()) is not None and tok.startswith("("):
            _, group = self.take()
            inner = group[1:-1].strip()
            if _cardinality(inner.split(",")[0], self.path, line) is not None:
                nums.append(inner)
            elif name is None and not nums:
                name = inner or None
            else:
                raise SpecError(f"{self.path}:{line}: unexpected group {group!r}")
        return name, nums

    def task_pools(self) -> tuple[TaskPool, ...]:
        pools = []
        while self.peek() is not None:
            line = self.last_line if self.pos >= len(self.toks) else self.toks[self.pos][0]
            kw = self.keyword()
            if kw != "task pool":
                raise SpecError(f"{self.path}:{line}: expected 'Task Pool', got {kw or self.peek()!r}")
            name, nums = self.groups(line)
            card = self._one_card(nums, line, "Task Pool")
            self.expect("{")
            phases = []
            while self.peek() != "}":
                phases.append(self.phase())
            self.take()
            pools.append(TaskPool(name, card, tuple(phases), line))
        return tuple(pools)

    def phase(self) -> Phase:
        line = self.toks[self.pos][0]
        kw = self.keyword()
        if kw != "phase":
            raise SpecError(f"{self.path}:{line}: expected 'Phase', got {kw or self.peek()!r}")
        name, nums = self.groups(line)
        if nums:
            raise SpecError(f"{self.path}:{line}: a Phase has no cardinality")
        self.expect("{")
        pools = []
        while self.peek() != "}":
            pools.append(self.thread_pool())
        self.take()
        return Phase(name, tuple(pools), line)

    def thread_pool(self) -> ThreadPool:
        line = self.toks[self.pos][0]
        kw = self.keyword()
        if kw not in ("thread pool", "thread group pool"):
            raise SpecError(f"{self.path}:{line}: expected 'Thread Pool' or 'Thread Group Pool', got {kw!r}")
        name, nums = self.groups(line)
        group_size = None
        if kw == "thread group pool":
            if len(nums) != 1 or len(nums[0].split(",")) != 2:
                raise SpecError(f"{self.path}:{line}: Thread Group Pool needs (cardinality, group size)")
            card_text, size_text = nums[0].split(",")
            card = _cardinality(card_text, self.path, line)
            if card is None or not size_text.strip().isdigit():
                raise SpecError(f"{self.path}:{line}: bad (cardinality, group size) {nums[0]!r}")
            group_size = int(size_text)
        else:
            card = self._one_card(nums, line, "Thread Pool")
        self.expect("{")
        vertices: list[str] = []
        while (tok := self.peek()) != "}":
            if tok is None:
                raise SpecError(f"{self.path}:{line}: thread pool is not closed")
            _, word = self.take()
            if word != ",":
                vertices.append(word)
        self.take()
        if group_size is not None and len(vertices) != 1:
            raise SpecError(f"{self.path}:{line}: a Thread Group Pool runs a single vertex, got {vertices}")
        return ThreadPool(name, card, tuple(vertices), group_size, line)

    def _one_card(self, nums: list[str], line: int, what: str) -> Cardinality:
        if len(nums) != 1:
            raise SpecError(f"{self.path}:{line}: {what} needs one cardinality, e.g. (1) or (1~∞)")
        card = _cardinality(nums[0], self.path, line)
        assert card is not None
        return card


def parse_spec(text: str, path: str = "<spec>") -> DataflowSpec:
    """Parse a specification; :class:`SpecError` names the file and line of any problem."""
    sections = _sections(text, path)
    if "vertices" not in sections:
        raise SpecError(f"{path}: the specification has no 'Vertices' section")

    def kv(name: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for line, key, val in _entries(sections.get(name, (0, []))[1], path):
            if key in out:
                raise SpecError(f"{path}:{line}: {key!r} defined twice in {name}")
            out[key] = val
        return out

    inputs, outputs = kv("input"), kv("output")
    vertices: dict[str, Vertex] = {}
    for line, key, val in _entries(sections["vertices"][1], path):
        if key in vertices:
            raise SpecError(f"{path}:{line}: vertex {key!r} defined twice")
        vertices[key] = Vertex(key, val, parse_location(val, path, line), line)
    nodes = set(inputs) | set(outputs) | set(vertices)
    edges: dict[str, Edge] = {}
    for line, key, val in _entries(sections.get("edges", (0, []))[1], path):
        ends = _ARROW_RE.split(val)
        if len(ends) != 2:
            raise SpecError(f"{path}:{line}: edge {key!r} must be 'source → target', got {val!r}")
        for end in ends:
            if end not in nodes:
                raise SpecError(f"{path}:{line}: edge {key!r} names unknown input/vertex/output {end!r}")
        edges[key] = Edge(key, ends[0], ends[1], line)
    mappings: dict[str, EdgeMapping] = {}
    for line, key, val in _entries(sections.get("edge mapping", (0, []))[1], path):
        if key not in edges:
            raise SpecError(f"{path}:{line}: edge mapping for unknown edge {key!r}")
        edge_type, comma, endpoint = val.rpartition(",")
        if not comma or endpoint.strip().lower() not in ENDPOINTS:
            raise SpecError(f"{path}:{line}: expected 'edge type, endpoint' with endpoint one of {sorted(ENDPOINTS)}")
        mappings[key] = EdgeMapping(key, edge_type.strip(), endpoint.strip().lower(), line)
    if "vertex mapping" not in sections:
        raise SpecError(f"{path}: the specification has no 'Vertex Mapping' section")
    header, body = sections["vertex mapping"]
    pools = _MappingParser(_tokens(body, path), path, header).task_pools()
    placed: dict[str, int] = {}
    for pool in pools:
        for ph in pool.phases:
            for tp in ph.pools:
                for v in tp.vertices:
                    if v not in vertices:
                        raise SpecError(f"{path}:{tp.line}: thread pool names unknown vertex {v!r}")
                    if v in placed:
                        raise SpecError(f"{path}:{tp.line}: vertex {v!r} is mapped twice (also line {placed[v]})")
                    placed[v] = tp.line
    for v, vertex in vertices.items():
        if v not in placed:
            raise SpecError(f"{path}:{vertex.line}: vertex {v!r} is in no thread pool of the Vertex Mapping")
    return DataflowSpec(inputs, outputs, vertices, edges, pools, mappings, path)


def load_spec(path: str | Path) -> DataflowSpec:
    """Parse a specification file."""
    p = Path(path)
    return parse_spec(read_text_file(p, "specification", SpecError), str(p))


def shipped_spec(name: str) -> DataflowSpec:
    """One of the specifications shipped in ``profiles/dataflow/specs`` (``hadoop-0.20``, ``hadoop-2``)."""
    res = resources.files("profiles.dataflow") / "specs" / f"{name}.spec"
    if not res.is_file():
        raise SpecError(f"no shipped specification {name!r} (have hadoop-0.20, hadoop-2)")
    return parse_spec(res.read_text(encoding="utf-8"), f"profiles/dataflow/specs/{name}.spec")
