"""The store's CHECK constraints as the migrations leave them, read from the SQL text.

Each migration is read in version order; a CHECK is keyed by its table and the name PostgreSQL gives it (its own,
else `<table>_<column>_check` when it names one column and `<table>_check` when it names several, with a number
appended on a clash), so that a later `DROP CONSTRAINT`, `DROP COLUMN` or `DROP TABLE` removes
the definition it names and a later `ADD CONSTRAINT` of the same name replaces it. Only the statements the
migrations use are understood: CREATE TABLE, ALTER TABLE (ADD COLUMN, ADD [CONSTRAINT name] CHECK, DROP
CONSTRAINT, DROP COLUMN) and DROP TABLE. `test_names_in_sql.py` checks this reading against PostgreSQL's own
catalogue after migrating, so a statement it misreads fails there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    table: str
    name: str
    column: str | None  # the one column it names (None: it names several)
    expression: str


_IDENT = r'"?([A-Za-z_][A-Za-z0-9_]*)"?'
_CHECK = re.compile(r"(?:\bCONSTRAINT\s+" + _IDENT + r"\s+)?\bCHECK\s*\(", re.IGNORECASE)
_CREATE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?" + _IDENT + r"\s*\(", re.IGNORECASE)
_ALTER = re.compile(r"ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?" + _IDENT + r"\s+", re.IGNORECASE)
_DROP_TABLE = re.compile(r"DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(.+)", re.IGNORECASE | re.DOTALL)
_TABLE_CONSTRAINT = re.compile(r"(CONSTRAINT\s+\S+\s+)?(CHECK|PRIMARY|UNIQUE|FOREIGN|EXCLUDE)\b", re.IGNORECASE)
_ADD = re.compile(r"ADD\s+(COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?", re.IGNORECASE)
_DROP_CONSTRAINT = re.compile(r"DROP\s+CONSTRAINT\s+(?:IF\s+EXISTS\s+)?" + _IDENT, re.IGNORECASE)
_DROP_COLUMN = re.compile(r"DROP\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?" + _IDENT, re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
_DOLLAR_QUOTED = re.compile(r"\$([A-Za-z_]*)\$.*?\$\1\$", re.DOTALL)


def _without_comments(sql: str) -> str:
    """The text with `--` comments removed (outside string literals), and each dollar-quoted body (a DO block's)
    emptied: procedural code makes no constraint this reading could follow (the catalogue check would see one)."""
    sql = _DOLLAR_QUOTED.sub("$$ $$", sql)
    out, i, quoted = [], 0, False
    while i < len(sql):
        c = sql[i]
        if c == "'":
            quoted = not quoted
        elif not quoted and sql.startswith("--", i):
            i = sql.find("\n", i)
            if i < 0:
                break
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _split(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where it stands outside parentheses and string literals."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(text):
        if c == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis that closes the one at `opening`."""
    depth, quoted = 0, False
    for i in range(opening, len(text)):
        c = text[i]
        if c == "'":
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses in: {text[opening : opening + 80]}")


def _checks_in(text: str) -> list[tuple[str | None, str]]:
    """Every `[CONSTRAINT name] CHECK (expression)` in a column or table element: (name or None, expression)."""
    found = []
    for match in _CHECK.finditer(text):
        end = _closing(text, match.end() - 1)
        found.append((match.group(1), " ".join(text[match.end() : end].split())))
    return found


class _Schema:
    def __init__(self) -> None:
        self.checks: dict[tuple[str, str], Check] = {}
        self.columns: dict[str, list[str]] = {}

    def add(self, table: str, name: str | None, expression: str) -> None:
        # PostgreSQL names a CHECK by the columns it references, wherever it was written (AddRelationNewConstraints):
        # one column gives <table>_<column>_check, several give <table>_check; a name in use gets a number.
        words = _WORD.findall(_QUOTED.sub("", expression))
        referenced = list(dict.fromkeys(w for w in words if w in self.columns.get(table, [])))
        column = referenced[0] if len(referenced) == 1 else None
        if name is None:
            base = f"{table}_{column}_check" if column else f"{table}_check"
            used = {used_name for _, used_name in self.checks}
            name, n = base, 0
            while name in used:
                n += 1
                name = f"{base}{n}"
        self.checks[(table, name)] = Check(table, name, column, expression)

    @staticmethod
    def is_table_constraint(text: str) -> bool:
        return _TABLE_CONSTRAINT.match(text) is not None

    def column_of(self, table: str, text: str) -> None:
        """Note the column a column element defines (its constraints may name columns defined after it)."""
        column = _WORD.match(text.lstrip('"'))
        assert column is not None, text
        self.columns.setdefault(table, []).append(column.group(0))

    def constraints_of(self, table: str, text: str) -> None:
        for name, expression in _checks_in(text):
            self.add(table, name, expression)

    def statement(self, text: str) -> None:
        if match := _CREATE.match(text):
            table = match.group(1)
            self.columns[table] = []
            elements = _split(text[match.end() : _closing(text, match.end() - 1)], ",")
            for element in elements:
                if not self.is_table_constraint(element):
                    self.column_of(table, element)
            for element in elements:
                self.constraints_of(table, element)
        elif match := _ALTER.match(text):
            table = match.group(1)
            for action in _split(text[match.end() :], ","):
                self.action(table, action)
        elif match := _DROP_TABLE.match(text):
            listed = re.split(r"\s+(?:CASCADE|RESTRICT)\b", match.group(1), flags=re.IGNORECASE)[0]
            for table in (t.strip().strip('"') for t in listed.split(",")):
                self.columns.pop(table, None)
                self.checks = {key: c for key, c in self.checks.items() if c.table != table}

    def action(self, table: str, action: str) -> None:
        head = action.split(None, 1)[0].upper()
        if head == "ADD":
            match = _ADD.match(action)
            assert match is not None, action
            rest = action[match.end() :]
            if match.group(1) is None and self.is_table_constraint(rest):
                self.constraints_of(table, rest)
            else:
                self.column_of(table, rest)
                self.constraints_of(table, rest)
        elif head == "DROP":
            if match := _DROP_CONSTRAINT.match(action):
                self.checks.pop((table, match.group(1)), None)
            elif match := _DROP_COLUMN.match(action):
                dropped = match.group(1)
                self.checks = {
                    key: c for key, c in self.checks.items() if not (c.table == table and c.column == dropped)
                }


def latest_checks(migrations: Iterable[str]) -> dict[tuple[str, str], Check]:
    """The CHECK constraints that the migrations, applied in the order given, leave: {(table, name): Check}."""
    schema = _Schema()
    for sql in migrations:
        for statement in _split(_without_comments(sql), ";"):
            schema.statement(statement)
    return schema.checks


def listed_values(expression: str) -> dict[str, set[str]]:
    """The values a CHECK lists for each column: `column IN ('a', 'b')` and `column <@ ARRAY['a', 'b']`."""
    listed: dict[str, set[str]] = {}
    pattern = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s+(?:IN\s*\(|<@\s*ARRAY\s*\[)([^)\]]*)[)\]]", re.IGNORECASE)
    for column, items in pattern.findall(expression):
        values = [v.replace("''", "'") for v in _QUOTED.findall(items)]
        if values:
            listed.setdefault(column, set()).update(values)
    return listed


def quoted_values(text: str) -> set[str]:
    """Every string literal in `text` (a CHECK's expression, or PostgreSQL's own rendering of it)."""
    return {v.replace("''", "'") for v in _QUOTED.findall(text)}
