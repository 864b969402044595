#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# bench/pages_detail.py DB WAL OFFSET N — which b-trees the WAL frames appended after
# byte OFFSET belong to, per request: PAGES_DETAIL=bench/pages_detail.py bench/pages.sh
# runs it while the WAL is still pinned. A frame's page number is read from its header
# and named through the dbstat table (SQLite built with it, as Debian's is); a page the
# database does not hold yet is counted as new/free.
import collections
import sqlite3
import struct
import sys

db, wal, start, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
con = sqlite3.connect(db)
owner = dict((page, name) for name, page in con.execute("SELECT name, pageno FROM dbstat"))
data = open(wal, "rb").read()
page_size = struct.unpack(">I", data[8:12])[0]
off = max(32, start)
frames = collections.Counter()
commits = 0
while off + 24 + page_size <= len(data):
    page, size_after = struct.unpack(">II", data[off:off + 8])
    frames[owner.get(page, "new/free")] += 1
    commits += size_after != 0
    off += 24 + page_size
print("commits             %d (%.2f per request)" % (commits, commits / n))
for name, count in frames.most_common():
    print("  %-36s %7d  %.2f per request" % (name, count, count / n))
