-- SPDX-License-Identifier: Apache-2.0
-- 011_placeholder.sql (PostgreSQL): stands in for the PostgreSQL side of migration 011
-- (a no-op there: 011 rebuilds an SQLite table) so that 012 keeps the numbers without a
-- gap. When both branches meet, the real 011 replaces this file.
SELECT 1;
