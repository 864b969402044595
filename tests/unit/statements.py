#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""STORE-1: every statement of the store prepares against the schema the migrations make.

Each statement of src/store/ has an id (enum th_stmt_id in store_int.h) and its SQL stays
inline at the call site that passes the id (decision-018); the connection prepares it the
first time that call runs. So a statement that no longer fits the schema (a column a
migration dropped, a typo in a rarely used path) would only fail when a request reaches
it. This test reads every `TH_STMT_<ID>, "…"` call site of src/store/*.c (string literals
and the file's own string macros, such as TASK_COLS, joined as the compiler joins them)
and checks that:

  - every id of the enum has a call site, and no id is given two different SQL texts
    (the cache keys on the id: the second text would silently run the first);
  - every statement prepares (sqlite3 EXPLAIN, parameters unbound) on a database that
    `tiny-harness migrate` made.

PostgreSQL's texts (STORE-6) are not prepared here: pg.c's own statements (TH_STMT_PG_*)
and the second text of a `th_sql_for(st, sqlite, postgresql)` call site only count as
call sites; check_store and the second pass of scripts/test.sh run them on PostgreSQL.

TAP output; exit 0 when every check passed, 1 otherwise, 77 when TH_BIN is not available.
"""

import os
import re
import subprocess
import sys
import tempfile

SRCDIR = os.environ.get("TH_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STORE = os.path.join(SRCDIR, "src", "store")
TH_BIN = os.path.abspath(os.environ["TH_BIN"]) if os.environ.get("TH_BIN") else ""

STRING = r'"(?:[^"\\]|\\.)*"'
# TH_STMT_X, followed by string literals and/or macro names up to the next comma.
CALL = re.compile(r"\b(TH_STMT_[A-Z0-9_]+)\s*,\s*((?:(?:" + STRING + r")|[A-Z][A-Z0-9_]*|\s)+?)\s*,")
# TH_STMT_X, th_sql_for(st, <SQLite text>, <PostgreSQL text>)
FOR = re.compile(r"\b(TH_STMT_[A-Z0-9_]+)\s*,\s*th_sql_for\(\s*st\s*,\s*((?:(?:" + STRING
                 + r")|[A-Z][A-Z0-9_]*|\s)+?)\s*,\s*((?:(?:" + STRING + r")|[A-Z][A-Z0-9_]*|\s)+?)\s*\)")
DEFINE = re.compile(r"^#define\s+([A-Z][A-Z0-9_]*)\s+((?:" + STRING + r"|\s|\\\n)+)$", re.M)

results = []


def check(ok, name, detail=""):
    results.append((ok, name, detail))


def c_string(tokens, macros):
    """The text of adjacent C string literals and string macros, as the compiler joins them."""
    out = []
    for tok in re.findall(STRING + r"|[A-Z][A-Z0-9_]*", tokens):
        if tok.startswith('"'):
            out.append(bytes(tok[1:-1], "utf-8").decode("unicode_escape"))
        elif tok in macros:
            out.append(macros[tok])
        else:
            raise ValueError(f"unknown macro {tok}")
    return "".join(out)


def enum_ids():
    text = open(os.path.join(STORE, "store_int.h"), encoding="utf-8").read()
    body = text[text.index("enum th_stmt_id") :]
    body = body[: body.index("};")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return [i for i in re.findall(r"\b(TH_STMT_[A-Z0-9_]+)\b", body) if i != "TH_STMT_COUNT_"]


def call_sites():
    """SQLite's call sites, id -> {sql: [file, …]}, and the ids PostgreSQL's texts use."""
    sites = {}
    pg_ids = set()
    for name in sorted(os.listdir(STORE)):
        if not name.endswith(".c"):
            continue
        text = open(os.path.join(STORE, name), encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments (none inside strings)
        macros = {}
        for m in DEFINE.finditer(text):
            macros[m.group(1)] = c_string(m.group(2).replace("\\\n", " "), macros)
        if name == "pg.c":
            pg_ids.update(m.group(1) for m in CALL.finditer(text))
            continue
        for m in FOR.finditer(text):
            sites.setdefault(m.group(1), {}).setdefault(c_string(m.group(2), macros), []).append(name)
            c_string(m.group(3), macros)  # both texts must be whole
            pg_ids.add(m.group(1))
        for m in CALL.finditer(text):
            if '"' not in m.group(2) and not any(t in macros for t in m.group(2).split()):
                continue  # an id passed on without its SQL (a helper's argument)
            sql = c_string(m.group(2), macros)
            sites.setdefault(m.group(1), {}).setdefault(sql, []).append(name)
    return sites, pg_ids


def main():
    if not TH_BIN or not os.access(TH_BIN, os.X_OK):
        print("1..0 # SKIP TH_BIN is not set to a built tiny-harness")
        return 77
    ids = enum_ids()
    sites, pg_ids = call_sites()
    check(len(ids) > 50, f"STORE-1 the enum names the store's statements ({len(ids)} ids)")
    missing = [i for i in ids if i not in sites and i not in pg_ids]
    check(not missing, "STORE-1 every statement id has a call site with its SQL", " ".join(missing))
    twice = {i: list(s) for i, s in sites.items() if len(s) > 1}
    check(not twice, "STORE-1 no statement id is given two different SQL texts", repr(twice))
    unknown = [i for i in list(sites) + sorted(pg_ids) if i not in ids]
    check(not unknown, "STORE-1 every id used in src/store is in the enum", " ".join(unknown))

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "statements.db")
        env = dict(os.environ, TINY_HARNESS_DB=db)
        env.pop("TINY_HARNESS_CONF", None)
        mig = subprocess.run([TH_BIN, "migrate"], env=env, capture_output=True, text=True, cwd=tmp)
        check(mig.returncode == 0, "STORE-1 tiny-harness migrate makes the schema", mig.stderr.strip())
        failed = []
        for sid in ids:
            for sql in sites.get(sid, {}):
                r = subprocess.run(["sqlite3", "-bail", db, "EXPLAIN " + sql], capture_output=True, text=True)
                if r.returncode != 0:
                    failed.append(f"{sid}: {r.stderr.strip()}")
        prepared = sum(len(s) for s in sites.values())
        check(not failed, f"STORE-1 every statement prepares on the migrated schema ({prepared} statements)",
              "\n".join(failed))

    print(f"1..{len(results)}")
    for n, (ok, name, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
        if not ok and detail:
            for line in detail.splitlines():
                print(f"# {line}")
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
