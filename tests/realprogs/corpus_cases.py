"""Inputs of tests/realprogs/test_corpus.py: what each large program runs, recompiled and under
qemu-aarch64.

- ``qjs``: QuickJS's own test suite, as its Makefile's ``test`` target runs it (file names and
  options from that target; the two cases it runs only with shared libraries are left out: the
  program is static).
- ``brotli``: Brotli's own test corpus (``tests/testdata``) the way upstream's test scripts use
  it: ``compatibility_test`` decompresses every ``*.compressed*`` file (each must give the file
  named before ``.compressed``); ``roundtrip_test`` compresses seven inputs at qualities 1, 6,
  9, 11, to a file and through a pipe, and decompresses them again.
- ``sqlite3``: SQLite's own test suite is TCL scripts driving a TCL extension (``testfixture``),
  which a static shell cannot run; so these are our SQL scripts over what the engine and its
  shell offer (DDL/DML, joins, aggregates, window functions, recursive CTEs, JSON, FTS5, R*Tree,
  date/time on fixed dates, printf, math functions, transactions, WAL, the shell's dot-commands
  and output modes, .dump/.sha3sum/.selftest, and errors).  Every script is deterministic (no
  clocks, no random(), no file names that differ between the two runs)."""

from __future__ import annotations

# (name, argv after "qjs", CI) -- Makefile `test:` target of quickjs 2025-04-26.  None in CI: building
# qjsc for the host, qjs for aarch64 and recompiling it cost ~2 minutes of CI's 2 cores
QJS_TESTS = [
    ("closure", ["tests/test_closure.js"], False),
    ("language", ["tests/test_language.js"], False),
    ("builtin", ["--std", "tests/test_builtin.js"], False),
    ("loop", ["tests/test_loop.js"], False),
    ("bigint", ["tests/test_bigint.js"], False),
    ("std", ["tests/test_std.js"], False),
    ("worker", ["tests/test_worker.js"], False),
    ("cyclic_import", ["tests/test_cyclic_import.js"], False),
]
# known failures: (name -> why)
QJS_XFAIL: dict[str, str] = {}  # none since guest threads run (test_worker: a Worker is a CLONE_THREAD thread)

# upstream tests/roundtrip_test.sh: its inputs (paths in the sdist) and qualities
BROTLI_ROUNDTRIP_INPUTS = [
    "tests/testdata/alice29.txt",
    "tests/testdata/asyoulik.txt",
    "tests/testdata/lcet10.txt",
    "tests/testdata/plrabn12.txt",
    "c/enc/encode.c",
    "c/common/dictionary.h",
    "c/dec/decode.c",
]
BROTLI_QUALITIES = [1, 6, 9, 11]

SQL_SCHEMA = """
CREATE TABLE dept(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, budget REAL);
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER REFERENCES dept(id), salary INTEGER,
                 hired TEXT, boss INTEGER);
INSERT INTO dept VALUES (1,'eng',1.5e6),(2,'ops',250000.25),(3,'sales',NULL),(4,'empty',0);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<60)
INSERT INTO emp SELECT i, 'e' || printf('%03d', i), 1 + (i*7) % 3, 40000 + (i*7919) % 50000,
       date('2020-01-01', '+' || (i*37) || ' days'), CASE WHEN i>3 THEN 1 + (i % 3) END FROM n;
CREATE INDEX emp_dept ON emp(dept, salary DESC);
CREATE VIEW payroll AS SELECT d.name AS dept, count(e.id) AS n, sum(e.salary) AS total
  FROM dept d LEFT JOIN emp e ON e.dept = d.id GROUP BY d.id;
"""

SQL_CASES: list[tuple[str, str, bool]] = [  # (name, script, CI: none, the recompile takes minutes)
    (
        "queries",
        SQL_SCHEMA
        + """
.headers on
.mode column
SELECT * FROM payroll ORDER BY dept;
SELECT dept, name, salary FROM emp WHERE salary > (SELECT avg(salary) FROM emp) ORDER BY salary DESC LIMIT 5;
SELECT d.name, max(e.salary), min(e.hired), group_concat(e.id, '+') FILTER (WHERE e.id % 10 = 0)
  FROM emp e JOIN dept d ON d.id = e.dept GROUP BY d.name HAVING count(*) > 10 ORDER BY 1;
SELECT a.name, b.name AS boss FROM emp a LEFT JOIN emp b ON a.boss = b.id WHERE a.id IN (1, 4, 5, 59) ORDER BY a.id;
SELECT count(*), count(DISTINCT dept), total(salary), avg(salary) FROM emp;
SELECT name FROM emp WHERE name LIKE 'e01%' OR name GLOB 'e05[0-2]' ORDER BY name;
SELECT id FROM emp EXCEPT SELECT id FROM emp WHERE id > 3 UNION SELECT 100 ORDER BY 1;
SELECT CASE WHEN salary < 50000 THEN 'low' WHEN salary < 75000 THEN 'mid' ELSE 'high' END AS band, count(*)
  FROM emp GROUP BY band ORDER BY band;
EXPLAIN QUERY PLAN SELECT * FROM emp WHERE dept = 2 ORDER BY salary DESC;
UPDATE emp SET salary = salary * 11 / 10 WHERE dept = 3 RETURNING id, salary;
DELETE FROM emp WHERE id > 55 RETURNING name;
SELECT changes(), total_changes(), last_insert_rowid();
""",
        False,
    ),
    (
        "windows-cte",
        SQL_SCHEMA
        + """
.mode box
SELECT id, dept, salary, rank() OVER w, dense_rank() OVER w, row_number() OVER w,
       sum(salary) OVER (PARTITION BY dept ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS roll,
       lag(salary, 1, -1) OVER (ORDER BY id), lead(name) OVER (ORDER BY id),
       ntile(4) OVER (ORDER BY salary), percent_rank() OVER w, cume_dist() OVER w,
       first_value(name) OVER w, nth_value(name, 2) OVER w
  FROM emp WINDOW w AS (PARTITION BY dept ORDER BY salary DESC) ORDER BY id LIMIT 20;
WITH RECURSIVE fib(n, a, b) AS (SELECT 1, 0, 1 UNION ALL SELECT n+1, b, a+b FROM fib WHERE n < 90)
SELECT n, a FROM fib WHERE n % 10 = 0;
WITH RECURSIVE chain(id, depth, path) AS (SELECT id, 0, name FROM emp WHERE boss IS NULL
  UNION ALL SELECT e.id, depth+1, path || '/' || e.name FROM emp e JOIN chain c ON e.boss = c.id WHERE depth < 3)
SELECT depth, count(*), max(path) FROM chain GROUP BY depth;
WITH RECURSIVE
  xaxis(x) AS (VALUES(-2.0) UNION ALL SELECT x+0.05 FROM xaxis WHERE x<1.2),
  yaxis(y) AS (VALUES(-1.0) UNION ALL SELECT y+0.1 FROM yaxis WHERE y<1.0),
  m(iter, cx, cy, x, y) AS (
    SELECT 0, x, y, 0.0, 0.0 FROM xaxis, yaxis
    UNION ALL
    SELECT iter+1, cx, cy, x*x-y*y + cx, 2.0*x*y + cy FROM m WHERE (x*x + y*y) < 4.0 AND iter<28),
  m2(iter, cx, cy) AS (SELECT max(iter), cx, cy FROM m GROUP BY cx, cy),
  a(t) AS (SELECT group_concat( substr(' .+*#', 1+min(iter/7,4), 1), '') FROM m2 GROUP BY cy)
SELECT group_concat(rtrim(t),x'0a') FROM a;
SELECT value, value * value FROM generate_series(1, 20, 3);
""",
        False,
    ),
    (
        "json",
        """
.mode list
SELECT json('{"a":[1,2,{"b":null}],"c":"x\\u00e9"}');
SELECT json_object('k', 1, 'arr', json_array(1.5, 'two', NULL, json('true'))), json_quote('a"b');
SELECT j.key, j.value, j.type, j.fullkey FROM json_each('{"x":1,"y":[2,3],"z":{"w":4.25}}') AS j;
SELECT fullkey, atom FROM json_tree('[1,[2,[3,{"four":4}]]]') WHERE atom IS NOT NULL;
SELECT '{"a":{"b":[10,20,30]}}' -> '$.a.b', '{"a":{"b":[10,20,30]}}' ->> '$.a.b[#-1]';
SELECT json_set('{"a":1}', '$.b', 2, '$.a', 'one'), json_remove('[0,1,2,3]', '$[1]', '$[1]'),
       json_patch('{"a":1,"b":2}', '{"b":null,"c":3}'), json_insert('[1]', '$[#]', 9);
SELECT json_valid('{"a":'), json_valid('[1,2]'), json_type('{"a":1.0}', '$.a'), json_array_length('[1,2,3]');
SELECT json_group_array(x ORDER BY x DESC), json_group_object(printf('k%d', x), x * 1.5)
  FROM (SELECT value AS x FROM generate_series(1, 5));
SELECT hex(jsonb('{"a":[1,2]}')), json(jsonb('{"a":[1,2]}')), jsonb_extract(jsonb('[7,8]'), '$[1]');
SELECT json_pretty('{"a":[1,{"b":2}]}');
SELECT json('{"a":1e400}'), json('[-0.0, 1e-7, 123456789012345678901234567890]');
SELECT json('not json');
""",
        False,
    ),
    (
        "fts5-rtree",
        """
CREATE VIRTUAL TABLE docs USING fts5(title, body, tokenize = 'porter unicode61');
INSERT INTO docs VALUES ('SQLite', 'SQLite is a small fast self-contained SQL database engine'),
  ('QuickJS', 'QuickJS is a small embeddable JavaScript engine with modules and async generators'),
  ('Brotli', 'Brotli is a generic lossless compression algorithm combining LZ77 and Huffman coding'),
  ('zstd', 'Zstandard is a fast lossless compression algorithm with real-time compression speeds'),
  ('Lua', 'Lua is a powerful efficient lightweight embeddable scripting language engine');
SELECT title, round(bm25(docs), 4) FROM docs WHERE docs MATCH 'engine' ORDER BY bm25(docs), title;
SELECT highlight(docs, 1, '[', ']') FROM docs WHERE docs MATCH 'compress*' ORDER BY rowid;
SELECT snippet(docs, 1, '<', '>', '...', 4) FROM docs WHERE docs MATCH 'small NOT javascript';
SELECT title FROM docs WHERE docs MATCH 'title:lua OR body:"lossless compression"' ORDER BY rank;
SELECT title FROM docs WHERE docs MATCH 'NEAR(small engine, 3)' ORDER BY rowid;
CREATE VIRTUAL TABLE box USING rtree(id, x0, x1, y0, y1);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 199)
INSERT INTO box SELECT i, (i*37)%100, (i*37)%100 + 1 + i%7, (i*53)%100, (i*53)%100 + 1 + i%5 FROM n;
SELECT count(*) FROM box WHERE x0 >= 10 AND x1 <= 40 AND y0 >= 20 AND y1 <= 60;
SELECT id FROM box WHERE x0 <= 50 AND x1 >= 50 AND y0 <= 50 AND y1 >= 50 ORDER BY id;
SELECT rtreecheck('box');
""",
        False,
    ),
    (
        "functions",
        """
.mode line
SELECT printf('%d|%5.2f|%-8s|%08.3e|%x|%X|%o|%c|%q|%Q|%w|%%|%,d|%!.20g', 42, 3.14159, 'left', 12345.678, 255, 255, 8,
              'Z', 'it''s', NULL, 'a"b', 1234567, 0.1) AS p;
SELECT 1/3, 1.0/3, 7 % 3, -7 / 2, -7 % 2, 9223372036854775807 + 1, 2.5e308 * 10, -(-9223372036854775808),
       CAST('12abc' AS INTEGER), CAST(1e20 AS INTEGER), CAST(-1e20 AS INTEGER), round(2.5), round(-2.5), round(1.005, 2);
SELECT typeof(1), typeof(1.0), typeof('1'), typeof(x'01'), typeof(NULL), 1 = 1.0, '1' = 1, 10 < '9', quote(x'00ff');
SELECT abs(-5), sign(-2.5), sqrt(2), pow(2, 0.5), exp(1), ln(10), log(100), log2(1024), log(2, 8), sin(1), cos(1),
       tan(1), atan2(1, 2), pi(), degrees(pi()), radians(180), ceil(-1.5), floor(-1.5), trunc(-1.5), mod(7.5, 2);
SELECT upper('straße'), lower('ÀÉÎ'), length('héllo'), octet_length('héllo'), substr('hello', -3, 2),
       instr('hello', 'll'), replace('aXbXc', 'X', '--'), trim('  x  '), ltrim('xxyxz', 'xy'), hex('é'),
       unicode('é'), char(72, 105), unhex('48656c6c6f'), concat('a', NULL, 'b'), concat_ws('-', 1, 2, 3),
       format('%s/%s', 'a', 'b'), like('a%', 'abc'), glob('*c', 'abc'), zeroblob(3) = x'000000';
SELECT date('2024-02-28', '+1 day'), date('2023-02-28', '+1 day'), time('13:45:10', '+50 minutes'),
       datetime('2024-01-31 10:00:00', '+1 month'), julianday('2000-01-01 12:00:00'), unixepoch('2024-06-01'),
       strftime('%Y-%m-%d %H:%M:%f %j %w %W %s', '2024-12-31 23:59:59.999'), date('2024-06-15', 'start of month', '-1 day'),
       datetime(1700000000, 'unixepoch'), timediff('2024-03-01', '2023-02-28'), date('2024-01-01', 'weekday 0'),
       strftime('%G-W%V-%u', '2021-01-03');
SELECT total(x), sum(x), avg(x), min(x), max(x), group_concat(x, ';') FROM (SELECT 1.5 AS x UNION ALL SELECT NULL
       UNION ALL SELECT 2 UNION ALL SELECT '3');
SELECT iif(1, 'yes', 'no'), coalesce(NULL, NULL, 'c'), nullif(3, 3), ifnull(NULL, 'd'), likely(1), max(1, 'a', 2.5);
SELECT sqlite_version(), sqlite_compileoption_used('ENABLE_FTS5'), sqlite_compileoption_used('THREADSAFE=0');
""",
        False,
    ),
    (
        "shell-modes",
        SQL_SCHEMA
        + """
.headers on
.mode csv
SELECT id, name, salary FROM emp WHERE id < 4;
.mode json
SELECT * FROM dept;
.mode markdown
SELECT * FROM payroll;
.mode table
SELECT * FROM dept WHERE id < 3;
.mode insert newtable
SELECT id, name FROM dept;
.mode quote
SELECT 'a''b', 1.5, NULL, x'beef';
.mode html
SELECT name, budget FROM dept LIMIT 2;
.mode tabs
SELECT * FROM dept;
.mode list
.separator | ~
.nullvalue <null>
SELECT * FROM dept;
.headers off
.mode line
SELECT * FROM dept WHERE id = 2;
.mode ascii
SELECT 1, 2;
.mode list
.separator "|" "\\n"
.print --- schema
.schema dept
.tables
.indexes emp
.fullschema --indent
.print --- dump
.dump dept
.width 5 -8
.mode column
SELECT name, budget FROM dept;
.print --- eqp
.eqp on
SELECT count(*) FROM emp WHERE dept = 1;
.eqp off
.show
""",
        False,
    ),
    (
        "files",
        """
.print --- a database on disk: journal, WAL, vacuum, attach, integrity
.open --new work.db
PRAGMA page_size = 1024;
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
INSERT INTO t SELECT i, printf('row %d %s', i, hex(i * 2654435761 % 4294967296)), zeroblob(i % 50) FROM n;
COMMIT;
SAVEPOINT s1; DELETE FROM t WHERE a % 2 = 0; ROLLBACK TO s1; RELEASE s1;
SELECT count(*), sum(length(b)), sum(length(c)) FROM t;
PRAGMA journal_mode = WAL;
UPDATE t SET b = upper(b) WHERE a % 3 = 0;
PRAGMA wal_checkpoint(TRUNCATE);
PRAGMA journal_mode = DELETE;
DELETE FROM t WHERE a > 1000;
VACUUM;
PRAGMA page_count; PRAGMA freelist_count; PRAGMA integrity_check; PRAGMA quick_check;
ATTACH 'other.db' AS o;
CREATE TABLE o.u AS SELECT a, b FROM t WHERE a < 100;
SELECT count(*), min(b), max(b) FROM o.u;
DETACH o;
SELECT name, file LIKE "%work.db" FROM pragma_database_list;
.sha3sum
.sha3sum --schema
.print --- csv import
.import --csv data.csv imported
SELECT * FROM imported ORDER BY 1;
.mode csv
.headers on
.once out.csv
SELECT * FROM t WHERE a < 6;
.mode list
.headers off
.read extra.sql
.selftest --init
.selftest
""",
        False,
    ),
    (
        "errors",
        """
.bail off
SELECT 1;
SELEC 2;
SELECT * FROM nosuchtable;
CREATE TABLE t(a UNIQUE NOT NULL CHECK (a > 0));
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (NULL);
INSERT INTO t VALUES (-1);
SELECT json('{');
SELECT abs(-9223372036854775808);
.nosuchcommand
.mode nosuchmode
SELECT 'still here';
.bail on
SELECT 'last';
SELECT x FROM t;
SELECT 'not reached';
""",
        False,
    ),
]

SQL_FILES = {
    "data.csv": 'id,name,score\n1,alpha,3.5\n2,"be, ta",4\n3,gamma,\n4,"quo""te",-1e3\n',
    "extra.sql": "SELECT 'from extra.sql', count(*) FROM t;\n",
}

# a larger workload (heavy): 200k rows through inserts, index builds, sorts, joins, window
# functions and aggregates -- also the benchmark's SQL workload (bench/corpus.py)
SQL_WORKLOAD = """
PRAGMA cache_size = -65536;
CREATE TABLE r(id INTEGER PRIMARY KEY, k INTEGER, v REAL, s TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < {rows})
INSERT INTO r SELECT i, (i * 2654435761) % 1000003, (i % 977) * 1.25 - 300.5, printf('item-%08d-%x', i, i * 31) FROM n;
CREATE INDEX r_k ON r(k);
CREATE INDEX r_s ON r(s DESC);
SELECT count(*), sum(k), round(avg(v), 6), min(s), max(s) FROM r;
SELECT k % 100 AS g, count(*), round(sum(v), 3), max(s) FROM r GROUP BY g ORDER BY g LIMIT 8;
SELECT count(*) FROM r a JOIN r b ON a.k = b.id WHERE a.v > 0;
SELECT id, k, rank() OVER (ORDER BY k DESC) FROM r WHERE id % 1000 = 0 ORDER BY id LIMIT 10;
SELECT sum(length(s)), count(DISTINCT substr(s, 6, 4)) FROM r;
UPDATE r SET v = v * 2 WHERE k % 7 = 0;
DELETE FROM r WHERE id % 5 = 0;
SELECT count(*), round(sum(v), 3) FROM r;
SELECT group_concat(s, ',') FROM (SELECT s FROM r ORDER BY s DESC LIMIT 5);
"""
