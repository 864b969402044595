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

STORE-10 (migration 010, decision-048) adds what the leaner schema must keep:

  - no statement reads a whole table: each EXPLAIN QUERY PLAN is SEARCHes, or a SCAN of
    a partial index (a small part of its table), except the operator statements named
    in OPERATOR_SCANS; and the hot statements (SendMessage's writes, GetTask, ListTasks,
    a stream's events_since) use the index named in HOT_PLANS;
  - deleting a task, a participant, a channel or a push config finds the rows that refer
    to it through an index (the foreign keys' look-ups, read from the bytecode);
  - the waiting_tasks view of 010 gives the same columns and rows as the one of 006 on
    tasks that cover each of its branches.

PostgreSQL's texts (STORE-6) are not prepared here: PostgreSQL's own statements
(TH_STMT_PG_*, in pg.c and follows.c) and the second text of a `th_sql_for(st, sqlite, postgresql)` call site only count as
call sites; check_store and the second pass of scripts/test.sh run them on PostgreSQL.

TAP output; exit 0 when every check passed, 1 otherwise, 77 when TH_BIN is not available.
"""

import os
import random
import re
import sqlite3
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
DEFINE = re.compile(r"^#define\s+([A-Z][A-Z0-9_]*)\s+((?:" + STRING + r"|[A-Z][A-Z0-9_]*|\s|\\\n)+)$", re.M)

results = []

# STORE-10: statements that may read a whole table, and why.
OPERATOR_SCANS = {
    "TH_STMT_OVERVIEW": "`tiny-harness tasks`, the operator's overview of every task",
    "TH_STMT_KEY_LIST": "`tiny-harness keys list`: api_keys holds the keys an operator issued",
    "TH_STMT_KEY_REVOKE": "`tiny-harness keys revoke`, on the same small table (010 dropped its name index)",
}

# STORE-10: the index each hot statement must use (a line of its plan contains the text).
HOT_PLANS = {
    "TH_STMT_TASK_INSERT": [],
    "TH_STMT_TASK_SET_STATUS": ["SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)"],
    "TH_STMT_TASK_GET": ["SEARCH t USING INDEX sqlite_autoindex_tasks_1 (id=?)",
                         "SEARCH m USING INDEX sqlite_autoindex_message_rows_1 (task_num=? AND pos=?)",
                         "SEARCH e USING COVERING INDEX sqlite_autoindex_event_rows_1 (task_num=?)"],
    "TH_STMT_TASK_LIST": ["SEARCH p USING COVERING INDEX participants_by_participant (participant_id=?"],
    "TH_STMT_TASK_LIST_AFTER": ["SEARCH p USING COVERING INDEX participants_by_participant (participant_id=?"],
    # 014: events and messages are views; the task id finds the task's number first.
    "TH_STMT_MSG_APPEND": ["SEARCH t USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)",
                           "SEARCH m USING COVERING INDEX sqlite_autoindex_message_rows_1 (task_num=?)"],
    "TH_STMT_MSG_EXISTS": ["SEARCH t USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)",
                           "SEARCH m USING COVERING INDEX sqlite_autoindex_message_rows_2 (task_num=? AND message_id=?)"],
    "TH_STMT_MSG_FIRST": ["SEARCH m USING INDEX message_rows_first_by_message_id (message_id=? AND sender=?)",
                          "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"],
    "TH_STMT_EV_INSERT": ["SEARCH tasks USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)"],
    "TH_STMT_EV_LAST": ["SEARCH t USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)",
                        "SEARCH e USING COVERING INDEX sqlite_autoindex_event_rows_1 (task_num=?)"],
    "TH_STMT_EV_SINCE": ["SEARCH t USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)",
                         "SEARCH e USING INDEX sqlite_autoindex_event_rows_1 (task_num=? AND seq>?)"],
    "TH_STMT_TURN_CREATE": [],
    "TH_STMT_TURN_START": [],
    # 019: turns is a view; a write names turn_rows, a read by task finds its number first.
    "TH_STMT_TURN_HOLD": ["SEARCH turn_rows USING INTEGER PRIMARY KEY (rowid=?)"],
    "TH_STMT_TURN_FINISH": ["SEARCH turn_rows USING INTEGER PRIMARY KEY (rowid=?)"],
    "TH_STMT_TURN_NEXT_EXPIRY": ["SEARCH t USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)",
                                 "SEARCH u USING INDEX turns_live_by_task (task_num=?)"],
    "TH_STMT_TURNS_CUT": ["SEARCH turn_rows USING INDEX turns_live_by_task (task_num=?)"],
    "TH_STMT_PUSH_ENQUEUE": ["SEARCH c USING INDEX sqlite_autoindex_push_configs_1 (task_id=?)"],
}

# STORE-10: statements that page in index order and must never sort (migration 013 made
# ListTasks' index ascending; it is read backwards for ORDER BY ... DESC).
NO_SORT = ("TH_STMT_TASK_LIST", "TH_STMT_TASK_LIST_AFTER")

# STORE-10: a foreign key whose look-up reads the whole child table, known and left so
# (decision-048): an index on turns(task_id) for every turn would cost each task bytes
# (turn_rows(task_num) since 019).
KNOWN_FK_SCANS = {("tasks", "turn_rows"): "purge's cascade to turn_rows (turns_live_by_task is partial)"}


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


def plan(db, sql):
    """EXPLAIN QUERY PLAN of sql as the lines sqlite3 prints."""
    r = subprocess.run(["sqlite3", "-bail", db, "EXPLAIN QUERY PLAN " + sql], capture_output=True, text=True)
    return r.stdout.splitlines() if r.returncode == 0 else ["error: " + r.stderr.strip()]


def whole_table_reads(con, sql, lines):
    """The lines of a plan that read a whole table (an alias resolved to its table); a SCAN
    of a partial index is a small part of its table and does not count."""
    tables = {n for (n,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    partial = {n for (n, q) in con.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'index'")
               if q is not None and re.search(r"\)\s*WHERE\s", q)}
    alias = {t: t for t in tables}
    for m in re.finditer(r"\b(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)", sql, re.I):
        if m.group(1) in tables:
            alias[m.group(2)] = m.group(1)
    bad = []
    for line in lines:
        m = re.search(r"\bSCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?", line)
        if m and m.group(1) in alias and (m.group(2) is None or m.group(2) not in partial):
            bad.append(line.strip(" |`-"))
    return bad


def fk_scans(con):
    """(parent, child) pairs whose foreign-key look-up on deleting a parent row walks the
    whole child table: a Rewind on a cursor opened on a table's root in the bytecode of
    DELETE FROM parent WHERE rowid = ?1 (its cascades and checks are sub-programs). A
    WITHOUT ROWID parent (participants since 016) is deleted by its primary key instead,
    whose rowid, if it has a column of that name, is an ordinary column."""
    roots = {r: (t, n) for (t, n, r) in con.execute("SELECT type, name, rootpage FROM sqlite_schema")}
    tables = [n for (n,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%'")]
    parents = sorted({fk[2] for t in tables for fk in con.execute(f"PRAGMA foreign_key_list({t})")})
    found = set()
    for parent in parents:
        cursors, last = {}, -1
        where, args = "rowid = ?1", (0,)
        if con.execute("SELECT wr FROM pragma_table_list WHERE name = ?", (parent,)).fetchone()[0]:
            pk = [c for (_k, c) in sorted((k, c) for (_cid, c, _t, _nn, _d, k)
                                          in con.execute(f"PRAGMA table_info({parent})") if k > 0)]
            where = " AND ".join(f"{c} = ?" for c in pk)
            args = tuple(0 for _ in pk)
        for addr, op, p1, p2, _p3, p4, *_ in con.execute(f"EXPLAIN DELETE FROM {parent} WHERE {where}", args):
            if addr <= last:
                cursors = {}  # a sub-program starts
            last = addr
            if op in ("OpenRead", "OpenWrite") and roots.get(p2, ("",))[0] == "table":
                cursors[p1] = roots[p2][1]
            elif op in ("Rewind", "Last") and p1 in cursors:
                found.add((parent, cursors[p1]))
    return parents, found


def view_006(srcdir):
    """The CREATE VIEW of sql/006_waiting.sql, renamed waiting_tasks_006."""
    text = open(os.path.join(srcdir, "sql", "006_waiting.sql"), encoding="utf-8").read()
    text = text[text.index("CREATE VIEW waiting_tasks AS"):].rstrip().rstrip(";")
    return text.replace("CREATE VIEW waiting_tasks AS", "CREATE VIEW waiting_tasks_006 AS", 1)


def waiting_rows(con):
    """Fill con with tasks that take each branch of waiting_tasks, then return both views'
    column names and rows: (010's, 006's)."""
    rnd = random.Random(10)
    ext = "io.github.madarauchiha-314.tiny-harness/status"

    def task(tid, state, sub, meta):
        con.execute("INSERT INTO tasks (id, context_id, state, sub_state, status_meta_json, status_ms, "
                    "name, goal, ext_json, created_by, created_ms, updated_ms) "
                    "VALUES (?, 'c', ?, ?, ?, ?, ?, '', '{}', 'alice', 1, ?)",
                    (tid, state, sub, meta, 1700000000000 + rnd.randrange(10**9), f"task {tid}",
                     rnd.randrange(10**6)))

    def ask(rid, tid, state, created_ms):
        con.execute("INSERT INTO help_requests (id, task_id, channel_id, asked_by, asked, question, "
                    "state, created_ms, answered_ms, asked_for) "
                    "VALUES (?, ?, ?, 'tiny-harness', ?, ?, ?, ?, ?, ?)",
                    (rid, tid, tid, rnd.choice(["bob", "carol"]), f"q {rid}", state, created_ms,
                     10 if state == "answered" else None, rnd.choice([None, "alice"])))

    # The edges, one task each: a request id that is a JSON number (the stored id is
    # text), an answered request named by the metadata, another task's request, none.
    task("e-num", "TASK_STATE_INPUT_REQUIRED", "awaiting-answer", '{"request_id":7}')
    ask("7", "e-num", "pending", 5)
    task("e-answered", "TASK_STATE_INPUT_REQUIRED", "awaiting-answer", '{"request_id":"e-a1"}')
    ask("e-a1", "e-answered", "answered", 5)
    ask("e-a2", "e-answered", "pending", 6)
    task("e-foreign", "TASK_STATE_INPUT_REQUIRED", "awaiting-answer", '{"request_id":"e-a2"}')
    task("e-none", "TASK_STATE_INPUT_REQUIRED", "awaiting-answer", None)
    task("e-next", "TASK_STATE_INPUT_REQUIRED", "awaiting-next-message", '{"request_id":"e-a2"}')
    states = ["TASK_STATE_INPUT_REQUIRED"] * 4 + ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    for i in range(400):
        tid = f"t{i:03d}"
        state = rnd.choice(states)
        sub = rnd.choice([None, "awaiting-next-message", "awaiting-answer", "awaiting-answer"]) \
            if state == "TASK_STATE_INPUT_REQUIRED" else None
        named = rnd.choice([f"{tid}-h0", f"{tid}-h1", f"{tid}-h9", "e-a1"])
        task(tid, state, sub, rnd.choice([
            None, "not json", "{}", "[1]", '{"participant_id":"bob"}', '{"request_id":"%s"}' % named,
            '{"participant_id":"carol","request_id":"%s"}' % named,
            '{"%s":{"participant_id":"dave","request_id":"%s"}}' % (ext, named),
            '{"participant_id":"erin","%s":{"participant_id":"dave"}}' % ext]))
        for k in range(rnd.choice([0, 0, 1, 2, 3])):
            # equal created_ms now and then: the rowid breaks the tie
            ask(f"{tid}-h{k}", tid, rnd.choice(["pending", "pending", "answered", "canceled"]),
                rnd.choice([5, 5, 9]))
        for k in range(rnd.choice([0, 1, 2])):
            con.execute("INSERT INTO confirmations (id, task_id, question, asked_by, state, created_ms) "
                        "VALUES (?, ?, 'ok?', 'alice', ?, 1)",
                        (f"{tid}-c{k}", tid, rnd.choice(["pending", "approved", "rejected"])))
    for i in range(0, 400, 3):
        for child in (i + 1, i + 2):
            if child < 400:
                con.execute("INSERT INTO subtask_links (parent_id, child_id, created_ms, resolved_ms) "
                            "VALUES (?, ?, 1, ?)", (f"t{i:03d}", f"t{child:03d}", rnd.choice([None, 3])))
    con.execute(view_006(SRCDIR))
    out = []
    for view in ("waiting_tasks", "waiting_tasks_006"):
        cur = con.execute(f"SELECT * FROM {view} ORDER BY id")
        out.append(([d[0] for d in cur.description], cur.fetchall()))
    con.rollback()
    return out


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
    shared = {}  # store_int.h's string macros (TH_PG_NOW_MS), known to every file
    header = open(os.path.join(STORE, "store_int.h"), encoding="utf-8").read()
    header = re.sub(r"/\*.*?\*/", " ", header, flags=re.S)
    for m in DEFINE.finditer(header):
        try:
            shared[m.group(1)] = c_string(m.group(2).replace("\\\n", " "), shared)
        except ValueError:
            pass  # not a string macro
    for name in sorted(os.listdir(STORE)):
        if not name.endswith(".c"):
            continue
        text = open(os.path.join(STORE, name), encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments (none inside strings)
        macros = dict(shared)
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
            if m.group(1).startswith("TH_STMT_PG_"):
                pg_ids.add(m.group(1))  # PostgreSQL's own, outside pg.c (follows.c)
                continue
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

        con = sqlite3.connect(db)
        con.execute("PRAGMA foreign_keys = ON")  # as th_store_open has it
        scans, plans = [], {}
        for sid in sorted(sites):
            for sql in sites[sid]:
                lines = plans[sid] = plan(db, sql)
                bad = whole_table_reads(con, sql, lines)
                if bad and sid not in OPERATOR_SCANS:
                    scans.append(f"{sid}: {'; '.join(bad)}")
        check(not scans, "STORE-10 no statement reads a whole table (operator statements aside)",
              "\n".join(scans))
        wrong = []
        for sid, want in HOT_PLANS.items():
            if sid not in plans:
                wrong.append(f"{sid}: no call site")
            for w in want:
                if not any(w in line for line in plans.get(sid, [])):
                    wrong.append(f"{sid}: no '{w}' in\n  " + "\n  ".join(plans.get(sid, [])))
        check(not wrong, f"STORE-10 the hot statements use their indexes ({len(HOT_PLANS)} statements)",
              "\n".join(wrong))
        # decision-077: an INSERT ... SELECT whose SELECT reads the table it inserts into
        # makes SQLite copy the SELECT's rows through a temporary b-tree first (EXPLAIN
        # shows its OpenEphemeral; other uses of that opcode, a CHECK's IN list, RETURNING,
        # are not this). VALUES with scalar subqueries has no such copy.
        copied = []
        for sid in sorted(sites):
            for sql in sites[sid]:
                m = re.match(r"\s*INSERT\s+INTO\s+(\w+)\s*(\([^)]*\))?\s*SELECT\b(.*)", sql, re.S | re.I)
                if m and re.search(r"\b(FROM|JOIN)\s+" + m.group(1) + r"\b", m.group(3), re.I):
                    copied.append(sid)
        check(not copied, "STORE-10 no INSERT ... SELECT reads the table it inserts into "
              "(decision-077)", " ".join(copied))
        sorted_ = [f"{sid}: " + "; ".join(plans.get(sid, [])) for sid in NO_SORT
                   if sid not in plans or any("TEMP B-TREE" in line for line in plans[sid])]
        check(not sorted_, "STORE-10 ListTasks pages in its index's order, with no sort",
              "\n".join(sorted_))
        view_plan = plan(db, "SELECT * FROM waiting_tasks")
        check(not whole_table_reads(con, "SELECT * FROM waiting_tasks", view_plan)
              and any("tasks_waiting" in line for line in view_plan),
              "STORE-10 waiting_tasks reads the INPUT_REQUIRED tasks through tasks_waiting",
              "\n".join(view_plan))

        parents, found = fk_scans(con)
        unexpected = sorted(found - set(KNOWN_FK_SCANS))
        check(len(parents) >= 4 and not unexpected,
              f"STORE-10 deleting a row of {', '.join(parents)} finds the rows referring to it by index",
              "\n".join(f"{p} -> {c}: a whole-table read" for p, c in unexpected))
        for known in sorted(set(KNOWN_FK_SCANS) - found):
            print(f"# {known[0]} -> {known[1]} no longer reads the whole table: "
                  "remove it from KNOWN_FK_SCANS", file=sys.stderr)

        (cols, rows), (cols6, rows6) = waiting_rows(con)
        con.close()
        waiting = [r for r in rows if r[2] is not None]
        check(cols == cols6 and rows == rows6 and len(rows) > 100
              and any(r[3] == "(participant unknown)" for r in rows)
              and any(r[5] is not None and r[4] is None for r in rows)
              and any(r[4] is not None for r in rows) and len(waiting) > 50,
              f"STORE-10 waiting_tasks (010) gives the columns and rows of 006's view ({len(rows)} rows)",
              f"columns {cols} / {cols6}\n" + "\n".join(
                  f"010 {a}\n006 {b}" for a, b in zip(rows, rows6) if a != b))

    print(f"1..{len(results)}")
    for n, (ok, name, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
        if not ok and detail:
            for line in detail.splitlines():
                print(f"# {line}")
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
