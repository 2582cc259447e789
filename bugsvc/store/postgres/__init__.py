"""The PostgreSQL engine (the optional extra `bugsvc[postgres]`: psycopg 3
and psycopg_pool): many writers at once, from many processes on many hosts.

Connections come from a pool (psycopg_pool), one per transaction, so a
process's threads share a few connections and a broken one is replaced.
Reads run in `REPEATABLE READ` transactions (one snapshot for the whole
call, as SQLite's reads have; the few that write, as login writes its
token, may, as on SQLite; the generations a read looks at first, which
any moment's snapshot may give, are read just before its BEGIN, so that a
read answered from what the process keeps runs no transaction at all:
Connection.execute_first; so are the revisions of the bugs GET bug answers
with kept objects, its one read, and a search's statement, with its time
limit in the same round trip: Connection.execute_ahead; a call that then
reads more first checks in its transaction that the generations still
stand: cache.Generations.confirm_ahead); writes run
`SERIALIZABLE`, so concurrent calls behave as if run one after another,
as they are on SQLite: a write PostgreSQL cannot order with another one
fails with a serialization failure (or a deadlock, or a unique key taken
meanwhile) and the caller runs it again from the start (db.Attempts).

The same SQL as on SQLite runs here: `?` placeholders become psycopg's,
whole numbers are sent as bigint (beyond 64 bits: OverflowError, as
sqlite3 raises), booleans and numeric results come back as SQLite gives
them (0/1, int or float), rows are read by position and by column name
(case-insensitively, as sqlite3.Row). The schema is schema.sql translated
statement by statement (`translate_script`): BIGINT for INTEGER,
identity columns for `id INTEGER PRIMARY KEY`, text in the "C" collation
(byte order, and lower() of ASCII letters only, as SQLite), trigger
functions for SQLite's triggers, and statements marked for one engine.

Split by job: connection.py (psycopg, values as SQLite gives them, rows,
the connection running SQLite's SQL), prepared.py (statements prepared
and run by libpq's own calls), sql.py (SQL text: placeholders and
schema.sql's statements translated), dialect.py (the engine's spellings,
the schema's introspection, bulk copy), database.py (the pool, transactions
and their retries, installing the schema).
"""
