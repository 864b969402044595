-- SPDX-License-Identifier: Apache-2.0
-- 011_placeholder.sql: stands in for migration 011 (an SQLite table rebuild made on
-- another branch) so that this branch's 012 keeps the numbers without a gap. When both
-- branches meet, the real 011 replaces this file and its line in src/store/local.mk.
SELECT 1;
