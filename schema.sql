-- bugsvc schema: the one source of the database's structure.
-- Written for SQLite; PostgreSQL runs its translation (bugsvc/store/postgres.py:
-- BIGINT for INTEGER, identity columns for `id INTEGER PRIMARY KEY`, text in
-- the "C" collation, trigger functions for triggers). Statements between
-- "-- BEGIN sqlite only" and "-- END sqlite only" are SQLite's alone; lines
-- starting with "--postgresql: " are PostgreSQL's alone. Times are UTC text
-- 'YYYY-MM-DD HH:MM:SS' written by Python, never by SQL defaults.
-- Changes after a release go into bugsvc/store/db.py MIGRATIONS; nothing is dropped.

-- Accounts -------------------------------------------------------------------

CREATE TABLE users (
    id             INTEGER PRIMARY KEY,
    login          TEXT NOT NULL,
    real_name      TEXT NOT NULL DEFAULT '',
    password_hash  TEXT,                       -- NULL: no database login
    disabled_text  TEXT NOT NULL DEFAULT '',   -- non-empty: account disabled
    email_enabled  INTEGER NOT NULL DEFAULT 1,
    created_at     TEXT NOT NULL,
    -- The comment form's Markdown box starts as the account's last comment left it.
    comment_markdown INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX users_login_idx ON users (lower(login));
CREATE INDEX users_real_name_idx ON users (lower(real_name));

CREATE TABLE groups (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL,
    is_bug_group  INTEGER NOT NULL DEFAULT 1,
    user_regexp   TEXT NOT NULL DEFAULT '',
    is_active     INTEGER NOT NULL DEFAULT 1,
    icon_url      TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX groups_name_idx ON groups (lower(name));

-- grant_type: 0 = granted directly, 1 = derived through group_group_map,
-- 2 = granted by the group's user_regexp.
CREATE TABLE user_groups (
    user_id     INTEGER NOT NULL REFERENCES users (id),
    group_id    INTEGER NOT NULL REFERENCES groups (id),
    is_bless    INTEGER NOT NULL DEFAULT 0,
    grant_type  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, group_id, is_bless, grant_type)
);
CREATE INDEX user_groups_group_idx ON user_groups (group_id, is_bless);

-- Login tokens (GET /rest/login); only a hash of the secret part is kept.
-- sudo_target_id, sudo_started: a page session of a member of bz_sudoers
-- acting as another account (relogin.cgi's sudo): whom it acts as, since
-- when (user_id stays the real account, whose sign-in the token is).
CREATE TABLE login_tokens (
    token_hash  TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    ip_address  TEXT,                          -- set: token valid only from there
    created_at  TEXT NOT NULL,
    last_used   TEXT NOT NULL,
    sudo_target_id INTEGER REFERENCES users (id),
    sudo_started   TEXT
);
CREATE INDEX login_tokens_user_idx ON login_tokens (user_id);

CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    key_hash     TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL DEFAULT '',
    revoked      INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    last_used    TEXT,
    last_used_ip TEXT
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

-- BEGIN login throttle
-- Failed sign-ins, for throttling guesses (bugsvc/auth.py): one row per
-- subject, 'login:<login name in lower case>' for wrong passwords (an
-- account, or a name no account has) or 'address:<client address>' for API
-- keys and login tokens that are not valid. A successful password login or an
-- administrator clears a row; one idle for a day is forgotten.
CREATE TABLE login_throttle (
    subject       TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    last_failure  TEXT NOT NULL
);
CREATE INDEX login_throttle_last_failure_idx ON login_throttle (last_failure);
-- END login throttle

CREATE TABLE saved_searches (
    id       INTEGER PRIMARY KEY,
    user_id  INTEGER NOT NULL REFERENCES users (id),
    name     TEXT NOT NULL,
    query    TEXT NOT NULL
);
CREATE INDEX saved_searches_user_idx ON saved_searches (user_id);

CREATE TABLE saved_reports (
    id       INTEGER PRIMARY KEY,
    user_id  INTEGER NOT NULL REFERENCES users (id),
    name     TEXT NOT NULL,
    query    TEXT NOT NULL
);
CREATE INDEX saved_reports_user_idx ON saved_reports (user_id);

-- Instance --------------------------------------------------------------------

CREATE TABLE params (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Server secrets (e.g. the key of bug update tokens); never shown by any call.
CREATE TABLE server_secrets (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Every admin change; GET /rest/last_audit_time reads the latest at_time,
-- the audit log page (auditlog.cgi) reads and filters the entries. user_id
-- is null for the operator's command line; object_name is the object's name
-- (a parameter's name, an account's login) when the change was made.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER,
    class       TEXT NOT NULL,                  -- e.g. 'Bugzilla::Product'
    object_id   INTEGER NOT NULL,
    field       TEXT,
    removed     TEXT,
    added       TEXT,
    at_time     TEXT NOT NULL,
    object_name TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_class_time_idx ON audit_log (class, at_time);
CREATE INDEX audit_log_time_idx ON audit_log (at_time);

-- Catalogue ---------------------------------------------------------------------

CREATE TABLE classifications (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    sort_key     INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX classifications_name_idx ON classifications (lower(name));

CREATE TABLE products (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL,
    classification_id  INTEGER NOT NULL REFERENCES classifications (id),
    description        TEXT NOT NULL DEFAULT '',
    is_active          INTEGER NOT NULL DEFAULT 1,
    default_milestone  TEXT NOT NULL DEFAULT '---',
    has_unconfirmed    INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX products_name_idx ON products (lower(name));

CREATE TABLE components (
    id                  INTEGER PRIMARY KEY,
    product_id          INTEGER NOT NULL REFERENCES products (id),
    name                TEXT NOT NULL,
    description         TEXT NOT NULL DEFAULT '',
    default_assignee    INTEGER NOT NULL REFERENCES users (id),
    default_qa_contact  INTEGER REFERENCES users (id),
    is_active           INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX components_product_name_idx ON components (product_id, lower(name));

CREATE TABLE component_cc (
    component_id  INTEGER NOT NULL REFERENCES components (id),
    user_id       INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (component_id, user_id)
);

CREATE TABLE versions (
    id          INTEGER PRIMARY KEY,
    product_id  INTEGER NOT NULL REFERENCES products (id),
    name        TEXT NOT NULL,
    sort_key    INTEGER NOT NULL DEFAULT 0,      -- bugsvc extension; the reference has none (0)
    is_active   INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX versions_product_name_idx ON versions (product_id, lower(name));

CREATE TABLE milestones (
    id          INTEGER PRIMARY KEY,
    product_id  INTEGER NOT NULL REFERENCES products (id),
    name        TEXT NOT NULL,
    sort_key    INTEGER NOT NULL DEFAULT 0,
    is_active   INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX milestones_product_name_idx ON milestones (product_id, lower(name));

-- Per-product group controls. membercontrol/othercontrol:
-- 0 = NA, 1 = Shown, 2 = Default, 3 = Mandatory.
CREATE TABLE group_controls (
    group_id       INTEGER NOT NULL REFERENCES groups (id),
    product_id     INTEGER NOT NULL REFERENCES products (id),
    entry          INTEGER NOT NULL DEFAULT 0,
    membercontrol  INTEGER NOT NULL DEFAULT 0,
    othercontrol   INTEGER NOT NULL DEFAULT 0,
    canedit        INTEGER NOT NULL DEFAULT 0,
    -- Members of the group hold these rights on this product alone
    -- (Bugzilla's per-product privileges).
    editcomponents INTEGER NOT NULL DEFAULT 0,
    editbugs       INTEGER NOT NULL DEFAULT 0,
    canconfirm     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (group_id, product_id)
);
CREATE INDEX group_controls_product_idx ON group_controls (product_id);

CREATE TABLE keywords (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    is_active    INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX keywords_name_idx ON keywords (lower(name));

-- Flag types; target_type is 'b' (bug) or 'a' (attachment).
CREATE TABLE flag_types (
    id                INTEGER PRIMARY KEY,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL,
    cc_list           TEXT NOT NULL DEFAULT '',
    target_type       TEXT NOT NULL DEFAULT 'b',
    is_active         INTEGER NOT NULL DEFAULT 1,
    is_requestable    INTEGER NOT NULL DEFAULT 1,
    is_requesteeble   INTEGER NOT NULL DEFAULT 1,
    is_multiplicable  INTEGER NOT NULL DEFAULT 1,
    sort_key          INTEGER NOT NULL DEFAULT 1,
    grant_group_id    INTEGER REFERENCES groups (id),
    request_group_id  INTEGER REFERENCES groups (id)
);

-- NULL product_id / component_id mean "all products" / "all components".
CREATE TABLE flag_inclusions (
    type_id       INTEGER NOT NULL REFERENCES flag_types (id),
    product_id    INTEGER REFERENCES products (id),
    component_id  INTEGER REFERENCES components (id)
);
CREATE INDEX flag_inclusions_type_idx ON flag_inclusions (type_id);

CREATE TABLE flag_exclusions (
    type_id       INTEGER NOT NULL REFERENCES flag_types (id),
    product_id    INTEGER REFERENCES products (id),
    component_id  INTEGER REFERENCES components (id)
);
CREATE INDEX flag_exclusions_type_idx ON flag_exclusions (type_id);

-- Bug fields (standard and cf_*) and the legal values of select fields.
CREATE TABLE fields (
    id                   INTEGER PRIMARY KEY,
    name                 TEXT NOT NULL UNIQUE,
    display_name         TEXT NOT NULL,
    type                 INTEGER NOT NULL DEFAULT 0,
    is_custom            INTEGER NOT NULL DEFAULT 0,
    is_mandatory         INTEGER NOT NULL DEFAULT 0,
    is_on_bug_entry      INTEGER NOT NULL DEFAULT 0,
    is_obsolete          INTEGER NOT NULL DEFAULT 0,
    sort_key             INTEGER NOT NULL DEFAULT 0,
    visibility_field_id  INTEGER REFERENCES fields (id),
    value_field_id       INTEGER REFERENCES fields (id)
);

-- Values of the visibility_field for which a field is shown.
CREATE TABLE field_visibility (
    field_id  INTEGER NOT NULL REFERENCES fields (id),
    value_id  INTEGER NOT NULL,
    PRIMARY KEY (field_id, value_id)
);

-- Legal values of select fields: bug_status, resolution, priority,
-- bug_severity, rep_platform, op_sys and custom selects.
CREATE TABLE field_values (
    id                   INTEGER PRIMARY KEY,
    field_id             INTEGER NOT NULL REFERENCES fields (id),
    value                TEXT NOT NULL,
    sort_key             INTEGER NOT NULL DEFAULT 0,
    is_active            INTEGER NOT NULL DEFAULT 1,
    is_open              INTEGER,                -- bug_status only
    visibility_value_id  INTEGER
);
CREATE UNIQUE INDEX field_values_field_value_idx ON field_values (field_id, value);

-- Status workflow; old_status_id NULL is the pseudo-status of a new bug.
CREATE TABLE status_workflow (
    old_status_id    INTEGER REFERENCES field_values (id),
    new_status_id    INTEGER NOT NULL REFERENCES field_values (id),
    require_comment  INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX status_workflow_idx ON status_workflow (old_status_id, new_status_id);

-- Bugs --------------------------------------------------------------------------
-- Select fields are stored as their value text (as the reference does), the
-- product and component by id.

CREATE TABLE bugs (
    id                     INTEGER PRIMARY KEY,
    product_id             INTEGER NOT NULL REFERENCES products (id),
    component_id           INTEGER NOT NULL REFERENCES components (id),
    version                TEXT NOT NULL,
    target_milestone       TEXT NOT NULL DEFAULT '---',
    summary                TEXT NOT NULL,
    status                 TEXT NOT NULL,
    resolution             TEXT NOT NULL DEFAULT '',
    is_confirmed           INTEGER NOT NULL DEFAULT 1,
    priority               TEXT NOT NULL,
    severity               TEXT NOT NULL,
    platform               TEXT NOT NULL,
    op_sys                 TEXT NOT NULL,
    assigned_to            INTEGER NOT NULL REFERENCES users (id),
    qa_contact             INTEGER REFERENCES users (id),
    reporter               INTEGER NOT NULL REFERENCES users (id),
    url                    TEXT NOT NULL DEFAULT '',
    whiteboard             TEXT NOT NULL DEFAULT '',
    dupe_of                INTEGER REFERENCES bugs (id),
    creation_time          TEXT NOT NULL,
    last_change_time       TEXT NOT NULL,
    deadline               TEXT,                     -- 'YYYY-MM-DD'
    estimated_time         REAL NOT NULL DEFAULT 0,
    remaining_time         REAL NOT NULL DEFAULT 0,
    is_cc_accessible       INTEGER NOT NULL DEFAULT 1,
    is_creator_accessible  INTEGER NOT NULL DEFAULT 1
);
-- BEGIN bug product status index
-- A search of one product and status (Bugzilla's commonest) reads its bugs
-- in id order, the default order, from this index and stops at its limit:
-- SQLite's indexes end with the rowid by themselves; PostgreSQL's is told.
-- BEGIN sqlite only
CREATE INDEX bugs_product_status_idx ON bugs (product_id, status);
-- END sqlite only
--postgresql: CREATE INDEX bugs_product_status_idx ON bugs (product_id, status, id);
-- END bug product status index
CREATE INDEX bugs_component_idx ON bugs (component_id);
CREATE INDEX bugs_status_idx ON bugs (status);
CREATE INDEX bugs_assigned_to_idx ON bugs (assigned_to);
CREATE INDEX bugs_reporter_idx ON bugs (reporter);
CREATE INDEX bugs_qa_contact_idx ON bugs (qa_contact);
CREATE INDEX bugs_creation_time_idx ON bugs (creation_time);
CREATE INDEX bugs_last_change_time_idx ON bugs (last_change_time);
CREATE INDEX bugs_dupe_of_idx ON bugs (dupe_of);

-- BEGIN bug_aliases
-- A bug's aliases, in the order they were given (id).
CREATE TABLE bug_aliases (
    id      INTEGER PRIMARY KEY,
    alias   TEXT NOT NULL,
    bug_id  INTEGER NOT NULL REFERENCES bugs (id)
);
CREATE UNIQUE INDEX bug_aliases_alias_idx ON bug_aliases (lower(alias));
CREATE INDEX bug_aliases_bug_idx ON bug_aliases (bug_id);
-- END bug_aliases

-- BEGIN bug text index
-- Substring searches of summaries, whiteboards and aliases (quicksearch's
-- words, `substring` searches) find their candidates through trigram
-- indexes, which keep substring semantics; the exact, case-folding
-- comparison is still made on each candidate. SQLite: FTS5 tables with the
-- trigram tokenizer over the tables' own rows (id as the FTS5 row id, which
-- it requires), kept in step by triggers. PostgreSQL: pg_trgm's GIN
-- indexes, which ILIKE uses.
-- BEGIN sqlite only
CREATE VIRTUAL TABLE bugs_text_fts USING fts5(summary, whiteboard, content='bugs', content_rowid='id', tokenize='trigram case_sensitive 0');
CREATE TRIGGER bugs_text_fts_insert AFTER INSERT ON bugs BEGIN INSERT INTO bugs_text_fts (rowid, summary, whiteboard) VALUES (new.id, new.summary, new.whiteboard); END;
CREATE TRIGGER bugs_text_fts_delete AFTER DELETE ON bugs BEGIN INSERT INTO bugs_text_fts (bugs_text_fts, rowid, summary, whiteboard) VALUES ('delete', old.id, old.summary, old.whiteboard); END;
CREATE TRIGGER bugs_text_fts_update AFTER UPDATE OF id, summary, whiteboard ON bugs BEGIN INSERT INTO bugs_text_fts (bugs_text_fts, rowid, summary, whiteboard) VALUES ('delete', old.id, old.summary, old.whiteboard); INSERT INTO bugs_text_fts (rowid, summary, whiteboard) VALUES (new.id, new.summary, new.whiteboard); END;
CREATE VIRTUAL TABLE bug_aliases_fts USING fts5(alias, content='bug_aliases', content_rowid='id', tokenize='trigram case_sensitive 0');
CREATE TRIGGER bug_aliases_fts_insert AFTER INSERT ON bug_aliases BEGIN INSERT INTO bug_aliases_fts (rowid, alias) VALUES (new.id, new.alias); END;
CREATE TRIGGER bug_aliases_fts_delete AFTER DELETE ON bug_aliases BEGIN INSERT INTO bug_aliases_fts (bug_aliases_fts, rowid, alias) VALUES ('delete', old.id, old.alias); END;
CREATE TRIGGER bug_aliases_fts_update AFTER UPDATE OF id, alias ON bug_aliases BEGIN INSERT INTO bug_aliases_fts (bug_aliases_fts, rowid, alias) VALUES ('delete', old.id, old.alias); INSERT INTO bug_aliases_fts (rowid, alias) VALUES (new.id, new.alias); END;
-- END sqlite only
--postgresql: CREATE EXTENSION IF NOT EXISTS pg_trgm;
--postgresql: CREATE INDEX bugs_text_trgm_idx ON bugs USING gin (summary gin_trgm_ops, whiteboard gin_trgm_ops);
--postgresql: CREATE INDEX bug_aliases_trgm_idx ON bug_aliases USING gin (alias gin_trgm_ops);
-- END bug text index

CREATE TABLE bug_cc (
    bug_id   INTEGER NOT NULL REFERENCES bugs (id),
    user_id  INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (bug_id, user_id)
);
CREATE INDEX bug_cc_user_idx ON bug_cc (user_id);

CREATE TABLE bug_keywords (
    bug_id      INTEGER NOT NULL REFERENCES bugs (id),
    keyword_id  INTEGER NOT NULL REFERENCES keywords (id),
    PRIMARY KEY (bug_id, keyword_id)
);
CREATE INDEX bug_keywords_keyword_idx ON bug_keywords (keyword_id);

-- blocked depends on depends_on.
CREATE TABLE dependencies (
    blocked     INTEGER NOT NULL REFERENCES bugs (id),
    depends_on  INTEGER NOT NULL REFERENCES bugs (id),
    PRIMARY KEY (blocked, depends_on)
);
CREATE INDEX dependencies_depends_on_idx ON dependencies (depends_on);

-- A bug restricted to groups is visible only to members of all of them.
CREATE TABLE bug_groups (
    bug_id    INTEGER NOT NULL REFERENCES bugs (id),
    group_id  INTEGER NOT NULL REFERENCES groups (id),
    PRIMARY KEY (bug_id, group_id)
);
CREATE INDEX bug_groups_group_idx ON bug_groups (group_id);

CREATE TABLE bug_see_also (
    id      INTEGER PRIMARY KEY,
    bug_id  INTEGER NOT NULL REFERENCES bugs (id),
    url     TEXT NOT NULL
);
CREATE UNIQUE INDEX bug_see_also_bug_url_idx ON bug_see_also (bug_id, url);

-- BEGIN bug_custom_values
-- Values of custom fields (multi-select: one row per value, in the order
-- they were given: id).
CREATE TABLE bug_custom_values (
    id        INTEGER PRIMARY KEY,
    bug_id    INTEGER NOT NULL REFERENCES bugs (id),
    field_id  INTEGER NOT NULL REFERENCES fields (id),
    value     TEXT NOT NULL
);
CREATE INDEX bug_custom_values_bug_idx ON bug_custom_values (bug_id, field_id);
CREATE INDEX bug_custom_values_field_idx ON bug_custom_values (field_id, value);
-- END bug_custom_values

-- Comments; count 0 is the description. kind: 0 plain, 2 duplicate of
-- (extra = the other bug), 3 has duplicate, 5 attachment created, 6
-- attachment updated (extra = attachment id).
CREATE TABLE comments (
    id             INTEGER PRIMARY KEY,
    bug_id         INTEGER NOT NULL REFERENCES bugs (id),
    count          INTEGER NOT NULL,
    author_id      INTEGER NOT NULL REFERENCES users (id),
    created_at     TEXT NOT NULL,
    body           TEXT NOT NULL DEFAULT '',
    is_private     INTEGER NOT NULL DEFAULT 0,
    work_time      REAL NOT NULL DEFAULT 0,
    kind           INTEGER NOT NULL DEFAULT 0,
    extra          TEXT,
    attachment_id  INTEGER,
    is_markdown    INTEGER NOT NULL DEFAULT 0,  -- 1: the body is rendered as Markdown
    edit_count     INTEGER NOT NULL DEFAULT 0   -- times its text was edited (comment_revisions)
);
CREATE UNIQUE INDEX comments_bug_count_idx ON comments (bug_id, count);
CREATE INDEX comments_author_idx ON comments (author_id);
-- The comments with hours worked, for a bug's sum of them (actual_time): in
-- the order of their numbers, as the sum over every comment adds them.
CREATE INDEX comments_work_time_idx ON comments (bug_id, count, work_time) WHERE work_time <> 0;

-- BEGIN comment text index
-- Full-text searches of comments (quicksearch's words while
-- quicksearch_fulltext is on, `content matches`) find their candidate bugs
-- through a trigram index of the comments' text, as the bug text index does
-- for summaries; the comparison, and whether the caller may read the
-- comment, are still checked on each candidate.
-- SQLite: an FTS5 table over the comments (id as its row id) that trails
-- them: it holds every comment up to its highest row id (the greatest id of
-- comments_fts_docsize, which has a row for each comment indexed) and none
-- above it. A new comment is indexed later, in batches, by the delivery
-- worker (store/sqlite.py, index_comment_text): adding one to the index in
-- the comment's own transaction cost several times the rest of the comment,
-- and batches cost a small part of that. The comments above the index's
-- highest id are compared one by one by every search, so a comment is found
-- as soon as it is stored. The triggers keep the rule for comments added
-- below that id (an id given again, as an import does), edited or deleted.
-- BEGIN sqlite only
CREATE VIRTUAL TABLE comments_fts USING fts5(body, content='comments', content_rowid='id', tokenize='trigram case_sensitive 0');
-- END sqlite only
-- BEGIN comment text index merging
-- SQLite: FTS5 merges the index's segments of one level once 16 of them
-- are there (its default: 4). Each batch the delivery worker adds is a new
-- segment, and the merges run inside that batch's write transaction, which
-- every comment waits for: with 4, adding 100,000 comments in batches of 25
-- spent 13.1 s of the index's time and 267 batches held the writers 10 ms
-- or longer (51 ms at the 99th percentile); with 16, 6.4 s and 87 (14 ms),
-- and the searches' lookups in the index took about as long. FTS5 merges
-- a level bit by bit, a little with each batch, only while it holds fewer
-- segments than its crisis count (default 16); at that count it merges the
-- whole level inside one batch: at 5,000,000 comments a merge of the 2 GB
-- index that held every comment for seconds. With the crisis count at 64
-- the bit-by-bit merges run first (125,000 comments in batches of 25: the
-- slowest batch 65 ms, against 397 ms with both at 16).
-- BEGIN sqlite only
INSERT INTO comments_fts (comments_fts, rank) VALUES ('automerge', 16);
INSERT INTO comments_fts (comments_fts, rank) VALUES ('crisismerge', 64);
-- END sqlite only
-- END comment text index merging
-- BEGIN comment text index triggers
-- BEGIN sqlite only
CREATE TRIGGER comments_fts_insert AFTER INSERT ON comments WHEN new.id <= (SELECT MAX(id) FROM comments_fts_docsize) BEGIN INSERT INTO comments_fts (rowid, body) VALUES (new.id, new.body); END;
CREATE TRIGGER comments_fts_delete AFTER DELETE ON comments WHEN old.id <= (SELECT MAX(id) FROM comments_fts_docsize) BEGIN INSERT INTO comments_fts (comments_fts, rowid, body) VALUES ('delete', old.id, old.body); END;
CREATE TRIGGER comments_fts_update AFTER UPDATE OF id, body ON comments BEGIN INSERT INTO comments_fts (comments_fts, rowid, body) SELECT 'delete', old.id, old.body WHERE old.id <= (SELECT MAX(id) FROM comments_fts_docsize); INSERT INTO comments_fts (rowid, body) SELECT new.id, new.body WHERE new.id <= (SELECT MAX(id) FROM comments_fts_docsize); END;
-- END sqlite only
-- END comment text index triggers
--postgresql: CREATE EXTENSION IF NOT EXISTS pg_trgm;
--postgresql: CREATE INDEX comments_body_trgm_idx ON comments USING gin (body gin_trgm_ops);
-- END comment text index
CREATE INDEX comments_created_idx ON comments (created_at);

CREATE TABLE comment_tags (
    comment_id  INTEGER NOT NULL REFERENCES comments (id),
    tag         TEXT NOT NULL
);
CREATE UNIQUE INDEX comment_tags_comment_tag_idx ON comment_tags (comment_id, lower(tag));
CREATE INDEX comment_tags_tag_idx ON comment_tags (lower(tag));

-- History: one row per changed field; field uses the API names.
CREATE TABLE bug_activity (
    id             INTEGER PRIMARY KEY,
    bug_id         INTEGER NOT NULL REFERENCES bugs (id),
    attachment_id  INTEGER,
    who            INTEGER NOT NULL REFERENCES users (id),
    changed_at     TEXT NOT NULL,
    field          TEXT NOT NULL,
    removed        TEXT NOT NULL DEFAULT '',
    added          TEXT NOT NULL DEFAULT '',
    comment_id     INTEGER
);
CREATE INDEX bug_activity_bug_idx ON bug_activity (bug_id, changed_at);
CREATE INDEX bug_activity_field_idx ON bug_activity (field, changed_at);
CREATE INDEX bug_activity_who_idx ON bug_activity (who);

CREATE TABLE attachments (
    id                INTEGER PRIMARY KEY,
    bug_id            INTEGER NOT NULL REFERENCES bugs (id),
    creator_id        INTEGER NOT NULL REFERENCES users (id),
    created_at        TEXT NOT NULL,
    last_change_time  TEXT NOT NULL,
    summary           TEXT NOT NULL,
    file_name         TEXT NOT NULL,
    content_type      TEXT NOT NULL,
    is_patch          INTEGER NOT NULL DEFAULT 0,
    is_obsolete       INTEGER NOT NULL DEFAULT 0,
    is_private        INTEGER NOT NULL DEFAULT 0,
    size              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX attachments_bug_idx ON attachments (bug_id);

CREATE TABLE attachment_data (
    attachment_id  INTEGER PRIMARY KEY REFERENCES attachments (id),
    data           BLOB NOT NULL
);

-- Flags on bugs (attachment_id NULL) and on attachments.
CREATE TABLE flags (
    id             INTEGER PRIMARY KEY,
    type_id        INTEGER NOT NULL REFERENCES flag_types (id),
    status         TEXT NOT NULL,
    bug_id         INTEGER NOT NULL REFERENCES bugs (id),
    attachment_id  INTEGER REFERENCES attachments (id),
    setter_id      INTEGER NOT NULL REFERENCES users (id),
    requestee_id   INTEGER REFERENCES users (id),
    created_at     TEXT NOT NULL,
    modified_at    TEXT NOT NULL
);
CREATE INDEX flags_bug_idx ON flags (bug_id, attachment_id);
CREATE INDEX flags_type_idx ON flags (type_id);
CREATE INDEX flags_requestee_idx ON flags (requestee_id);
CREATE INDEX flags_setter_idx ON flags (setter_id);

CREATE TABLE bug_user_last_visit (
    user_id        INTEGER NOT NULL REFERENCES users (id),
    bug_id         INTEGER NOT NULL REFERENCES bugs (id),
    last_visit_ts  TEXT NOT NULL,
    PRIMARY KEY (user_id, bug_id)
);
CREATE INDEX bug_user_last_visit_time_idx ON bug_user_last_visit (user_id, last_visit_ts);

-- Personal tags (the bug field `tags`, search `tag`).
CREATE TABLE personal_tags (
    id       INTEGER PRIMARY KEY,
    user_id  INTEGER NOT NULL REFERENCES users (id),
    name     TEXT NOT NULL
);
CREATE UNIQUE INDEX personal_tags_user_name_idx ON personal_tags (user_id, lower(name));

CREATE TABLE bug_tags (
    bug_id  INTEGER NOT NULL REFERENCES bugs (id),
    tag_id  INTEGER NOT NULL REFERENCES personal_tags (id),
    PRIMARY KEY (bug_id, tag_id)
);
CREATE INDEX bug_tags_tag_idx ON bug_tags (tag_id);

-- BEGIN import state
-- Where an import from a Bugzilla (bugsvc import) stands, so that a stopped
-- run continues and a later run brings only what changed: name/value pairs
-- (the source, the current run's start and cursor, the last finished run).
CREATE TABLE import_state (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
-- Links between bugs that wait for their other bug to be imported (a
-- dependency or duplicate naming a bug with a higher id): field is
-- 'dupe_of', 'depends_on' or 'blocks', seen from bug_id.
CREATE TABLE import_links (
    bug_id  INTEGER NOT NULL,
    field   TEXT NOT NULL,
    other   INTEGER NOT NULL,
    PRIMARY KEY (bug_id, field, other)
);
CREATE INDEX import_links_other_idx ON import_links (other);
-- END import state

-- BEGIN catalog generation
-- A counter that every change to the rarely changing data the serving
-- processes keep in memory (parameters, fields and their values, the status
-- workflow, the names of classifications, products, components and groups)
-- moves on, whoever makes
-- the change: a process's copy is good while the counter has not moved
-- (bugsvc/cache.py).
CREATE TABLE catalog_generation (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  INTEGER NOT NULL
);
INSERT INTO catalog_generation (id, value) VALUES (1, 0);
CREATE TRIGGER params_insert_moves_generation AFTER INSERT ON params BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER params_update_moves_generation AFTER UPDATE ON params BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER params_delete_moves_generation AFTER DELETE ON params BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER fields_insert_moves_generation AFTER INSERT ON fields BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER fields_update_moves_generation AFTER UPDATE ON fields BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER fields_delete_moves_generation AFTER DELETE ON fields BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_values_insert_moves_generation AFTER INSERT ON field_values BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_values_update_moves_generation AFTER UPDATE ON field_values BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_values_delete_moves_generation AFTER DELETE ON field_values BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_visibility_insert_moves_generation AFTER INSERT ON field_visibility BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_visibility_update_moves_generation AFTER UPDATE ON field_visibility BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER field_visibility_delete_moves_generation AFTER DELETE ON field_visibility BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER classifications_insert_moves_generation AFTER INSERT ON classifications BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER classifications_update_moves_generation AFTER UPDATE ON classifications BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER classifications_delete_moves_generation AFTER DELETE ON classifications BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER products_insert_moves_generation AFTER INSERT ON products BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER products_update_moves_generation AFTER UPDATE ON products BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER products_delete_moves_generation AFTER DELETE ON products BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER components_insert_moves_generation AFTER INSERT ON components BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER components_update_moves_generation AFTER UPDATE ON components BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER components_delete_moves_generation AFTER DELETE ON components BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER groups_insert_moves_generation AFTER INSERT ON groups BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER groups_update_moves_generation AFTER UPDATE ON groups BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER groups_delete_moves_generation AFTER DELETE ON groups BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER status_workflow_insert_moves_generation AFTER INSERT ON status_workflow BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER status_workflow_update_moves_generation AFTER UPDATE ON status_workflow BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER status_workflow_delete_moves_generation AFTER DELETE ON status_workflow BEGIN UPDATE catalog_generation SET value = value + 1; END;
-- END catalog generation

-- BEGIN notifications
-- Bug mail and webhooks (bugsvc/notify/). Each change a user may be told
-- about is written as an event in the change's own transaction; a delivery
-- worker works out who is told (messages) and delivers each message.

-- Mail preferences: a user's choice for one relationship to a bug (0
-- assignee, 1 QA contact, 2 reporter, 3 CC; 100 for the flag events, which
-- need none) and one event, with the numbers of the reference's email
-- preferences. Only choices that differ from the defaults are stored.
CREATE TABLE email_settings (
    user_id       INTEGER NOT NULL REFERENCES users (id),
    relationship  INTEGER NOT NULL,
    event         INTEGER NOT NULL,
    enabled       INTEGER NOT NULL,
    PRIMARY KEY (user_id, relationship, event)
);

-- User watching: the watcher gets the mail the watched user would get.
CREATE TABLE user_watch (
    watcher  INTEGER NOT NULL REFERENCES users (id),
    watched  INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (watcher, watched)
);
CREATE INDEX user_watch_watched_idx ON user_watch (watched);

-- Bugs a user wants no mail about, whatever their relationship to them.
CREATE TABLE email_bug_ignore (
    user_id  INTEGER NOT NULL REFERENCES users (id),
    bug_id   INTEGER NOT NULL REFERENCES bugs (id),
    PRIMARY KEY (user_id, bug_id)
);

-- One event per bug a call changed (bugsvc/bugs/events.py decides what it
-- holds: JSON in data). expanded_at: when its messages were made (NULL: not yet).
CREATE TABLE outbox_events (
    id           INTEGER PRIMARY KEY,
    bug_id       INTEGER NOT NULL,
    changer_id   INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    data         TEXT NOT NULL,
    expanded_at  TEXT
);
CREATE INDEX outbox_events_expanded_idx ON outbox_events (expanded_at, id);

-- One message per recipient of an event (a mail to an account or an
-- address, a call of a webhook), or of an account's own mail (password
-- reset, new account, a disabled webhook). state: pending (to be sent at
-- next_attempt_at, by whoever holds the lease), sent, dropped (nothing to
-- send: the recipient may not see it or does not want it; last_error says
-- why) or parked (failed too often; an administrator can send it again).
CREATE TABLE outbox_messages (
    id               INTEGER PRIMARY KEY,
    event_id         INTEGER REFERENCES outbox_events (id),
    bug_id           INTEGER,
    channel          TEXT NOT NULL,
    kind             TEXT NOT NULL,
    user_id          INTEGER REFERENCES users (id),
    address          TEXT,
    webhook_id       INTEGER,
    data             TEXT NOT NULL,
    state            TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    lease_owner      TEXT,
    lease_until      TEXT,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL,
    done_at          TEXT
);
CREATE INDEX outbox_messages_due_idx ON outbox_messages (state, next_attempt_at);
CREATE INDEX outbox_messages_webhook_idx ON outbox_messages (webhook_id, state, bug_id);
CREATE INDEX outbox_messages_event_idx ON outbox_messages (event_id);

-- Named locks of the delivery workers: 'expand' is held by the one worker
-- turning events into messages, so messages are made in event order.
CREATE TABLE outbox_locks (
    name   TEXT PRIMARY KEY,
    owner  TEXT
);
INSERT INTO outbox_locks (name, owner) VALUES ('expand', NULL);

-- Webhooks (bugzilla.mozilla.org's design). events: comma-separated create,
-- change, comment, attachment, attachment_change. product_id NULL: any
-- product; component_id NULL: any component. secret signs the calls (it
-- must be kept to sign; it is shown once, at creation or rotation);
-- previous_secret still signs until previous_secret_until (rotation).
CREATE TABLE webhooks (
    id                     INTEGER PRIMARY KEY,
    user_id                INTEGER NOT NULL REFERENCES users (id),
    name                   TEXT NOT NULL,
    url                    TEXT NOT NULL,
    events                 TEXT NOT NULL,
    product_id             INTEGER REFERENCES products (id),
    component_id           INTEGER REFERENCES components (id),
    enabled                INTEGER NOT NULL DEFAULT 1,
    disabled_reason        TEXT NOT NULL DEFAULT '',
    secret                 TEXT NOT NULL,
    previous_secret        TEXT,
    previous_secret_until  TEXT,
    created_at             TEXT NOT NULL,
    last_attempt_at        TEXT,
    last_success_at        TEXT,
    last_error             TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX webhooks_user_name_idx ON webhooks (user_id, lower(name));

-- One-time tokens mailed to reset a password (kind 'password', user_id set)
-- or to create an account (kind 'account', login: the address). Only a hash
-- of the secret is kept; a token expires, and is used once.
CREATE TABLE account_tokens (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    user_id     INTEGER REFERENCES users (id),
    login       TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX account_tokens_user_idx ON account_tokens (user_id, kind);
CREATE INDEX account_tokens_login_idx ON account_tokens (lower(login), kind);
-- END notifications

-- BEGIN request counts
-- Calls counted per subject ('key:<hash of an API key>', 'account:<id>',
-- 'address:<ip>', 'signup-address:<ip>', 'signup-domain:<domain>') and rule
-- in fixed windows (slot: seconds since 1970 divided by the rule's period;
-- ends_at: when the window ends, in seconds since 1970), shared by every
-- server process (bugsvc/api/limits.py).
CREATE TABLE request_counts (
    subject  TEXT NOT NULL,
    rule     TEXT NOT NULL,
    slot     INTEGER NOT NULL,
    calls    INTEGER NOT NULL,
    ends_at  INTEGER NOT NULL,
    PRIMARY KEY (subject, rule, slot)
);
CREATE INDEX request_counts_ends_idx ON request_counts (ends_at);
-- END request counts

-- BEGIN series
-- Charts over time (chart.cgi), as Bugzilla's series tables: a series is a
-- saved search (query: a bug list's query string) counted every
-- `frequency` days into series_data, one row a day at most (the primary
-- key: several processes collecting the same day store one count). Public
-- series are counted as an anonymous visitor sees the bugs, private ones
-- as their creator sees them (creator_id NULL: made by the collection
-- itself, always public).
CREATE TABLE series_categories (
    id    INTEGER PRIMARY KEY,
    name  TEXT NOT NULL
);
CREATE UNIQUE INDEX series_categories_name_idx ON series_categories (name);
CREATE TABLE series (
    id           INTEGER PRIMARY KEY,
    creator_id   INTEGER REFERENCES users (id),
    category     INTEGER NOT NULL REFERENCES series_categories (id),
    subcategory  INTEGER NOT NULL REFERENCES series_categories (id),
    name         TEXT NOT NULL,
    frequency    INTEGER NOT NULL DEFAULT 1,
    query        TEXT NOT NULL,
    is_public    INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX series_name_idx ON series (category, subcategory, name);
CREATE TABLE series_data (
    series_id     INTEGER NOT NULL REFERENCES series (id),
    series_date   TEXT NOT NULL,
    series_value  INTEGER NOT NULL,
    PRIMARY KEY (series_id, series_date)
);
-- END series

-- BEGIN forges
-- Code forge repositories whose webhooks bugsvc receives at /hooks/<forge>
-- (bugsvc/forge/): the repository's full name as its payloads give it
-- (owner/name), the secret that signs its payloads (GitHub, Gitea) or is
-- their token (GitLab), the branches on which "Fixes bug N" resolves a bug
-- (comma-separated; empty: the repository's default branch), whether "#N"
-- names a bug, and the account that acts when no account has the
-- committer's address (NULL: none, and such commits are left alone).
CREATE TABLE forge_repositories (
    id               INTEGER PRIMARY KEY,
    forge            TEXT NOT NULL,
    repository       TEXT NOT NULL,
    secret           TEXT NOT NULL,
    branches         TEXT NOT NULL DEFAULT '',
    hash_references  INTEGER NOT NULL DEFAULT 0,
    bot_account_id   INTEGER REFERENCES users (id),
    created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX forge_repositories_name_idx ON forge_repositories (forge, lower(repository));

-- What a forge's events did to a bug, so that an event delivered again
-- does nothing more: kind 'commit' (its comment), 'fix' (the bug resolved),
-- 'request opened', 'request merged'; ref: the commit's id or the request's URL.
CREATE TABLE forge_links (
    repository_id  INTEGER NOT NULL REFERENCES forge_repositories (id),
    kind           TEXT NOT NULL,
    ref            TEXT NOT NULL,
    bug_id         INTEGER NOT NULL REFERENCES bugs (id),
    created_at     TEXT NOT NULL,
    PRIMARY KEY (repository_id, kind, ref, bug_id)
);
-- END forges

-- BEGIN mail in
-- Messages `bugsvc mail-in` took (by Message-ID), so that a message
-- delivered twice is taken once.
CREATE TABLE mail_in_messages (
    message_id   TEXT PRIMARY KEY,
    received_at  TEXT NOT NULL
);
-- END mail in

-- BEGIN second factor
-- An account's second factor: the TOTP secret of its authenticator app
-- (base32), kept as the app has it (a key to encrypt it with would live in
-- this same database), never shown again once enrolment is confirmed;
-- confirmed_at NULL while enrolment waits for a first code; last_step: the
-- time step of the last code accepted, so no code works twice.
CREATE TABLE second_factors (
    user_id       INTEGER PRIMARY KEY REFERENCES users (id),
    secret        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    confirmed_at  TEXT,
    last_step     INTEGER NOT NULL DEFAULT 0
);

-- Recovery codes of a second factor, each usable once: only a SHA-256
-- digest of each (80 random bits) is kept.
CREATE TABLE recovery_codes (
    code_hash  TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id)
);
CREATE INDEX recovery_codes_user_idx ON recovery_codes (user_id);

-- Sign-ins on the web pages whose password was right and that wait for the
-- second factor (or, for a member of mfa_group without one, for its
-- enrolment): a short-lived secret the next page sends back, of which only
-- a digest is kept, valid only from the address the password came from;
-- restrict_login: its login token is to be valid only from there too;
-- remember: the visitor asked to stay signed in; enrol: it waits for the
-- enrolment of a second factor (a member of mfa_group without one).
CREATE TABLE pending_sign_ins (
    token_hash      TEXT PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (id),
    ip_address      TEXT NOT NULL,
    restrict_login  INTEGER NOT NULL DEFAULT 0,
    remember        INTEGER NOT NULL DEFAULT 0,
    enrol           INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
);
-- END second factor
-- BEGIN whines
-- Scheduled searches mailed ("whining", editwhines.cgi), as Bugzilla's
-- whine tables. An event (its owner's subject, body text and whether it is
-- mailed when its searches find nothing) has schedules and queries. A
-- schedule runs on run_day ('All', 'MF', 'Mon' ... 'Sun', '1' ... '31',
-- 'last') at run_time (an hour '0' ... '23', or an interval '15min',
-- '30min', '60min') for its recipient: the account (mailto_type 0) or the
-- members of the group (mailto_type 1) mailto_id names. run_next is when it
-- runs next (UTC, YYYY-MM-DD HH:MM:SS.ffffff): claiming a run moves it on
-- in the same transaction that queues the mail, so a run is mailed once.
-- A query is one of the owner's saved searches by name, listed in sortkey
-- order, each bug in a mail of its own when onemailperbug is set.
CREATE TABLE whine_events (
    id            INTEGER PRIMARY KEY,
    owner_id      INTEGER NOT NULL REFERENCES users (id),
    subject       TEXT NOT NULL DEFAULT '',
    body          TEXT NOT NULL DEFAULT '',
    mailifnobugs  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX whine_events_owner_idx ON whine_events (owner_id);
CREATE TABLE whine_schedules (
    id           INTEGER PRIMARY KEY,
    event_id     INTEGER NOT NULL REFERENCES whine_events (id),
    run_day      TEXT NOT NULL,
    run_time     TEXT NOT NULL,
    run_next     TEXT NOT NULL,
    mailto_type  INTEGER NOT NULL DEFAULT 0,
    mailto_id    INTEGER NOT NULL
);
CREATE INDEX whine_schedules_event_idx ON whine_schedules (event_id);
CREATE INDEX whine_schedules_next_idx ON whine_schedules (run_next);
CREATE TABLE whine_queries (
    id             INTEGER PRIMARY KEY,
    event_id       INTEGER NOT NULL REFERENCES whine_events (id),
    query_name     TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    sortkey        INTEGER NOT NULL DEFAULT 0,
    onemailperbug  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX whine_queries_event_idx ON whine_queries (event_id);
-- END whines
-- BEGIN external logins
-- Accounts that sign in through someone else: a directory (source 'LDAP',
-- subject the entry's LDAPuidattribute value) or an OpenID provider (source
-- 'oidc:' and the provider's name, subject its `sub` claim). Such accounts
-- have no stored password unless they are given one.
CREATE TABLE external_logins (
    source      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (source, subject)
);
CREATE INDEX external_logins_user_idx ON external_logins (user_id);
-- END external logins
-- BEGIN user settings
-- How each account chose the pages to look (the reference's profile
-- settings); no row: the default. name: color_scheme (system, light or
-- dark; bugsvc/accounts/account.py SETTINGS).
CREATE TABLE user_settings (
    user_id  INTEGER NOT NULL REFERENCES users (id),
    name     TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
);
-- END user settings


-- BEGIN comment revisions
-- The earlier texts of edited comments (bugzilla.mozilla.org's comment
-- editing): who replaced the text, when, and the text it replaced.
CREATE TABLE comment_revisions (
    id           INTEGER PRIMARY KEY,
    comment_id   INTEGER NOT NULL REFERENCES comments (id),
    editor_id    INTEGER NOT NULL REFERENCES users (id),
    changed_at   TEXT NOT NULL,
    old_body     TEXT NOT NULL,
    old_is_markdown INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX comment_revisions_comment_idx ON comment_revisions (comment_id);
-- END comment revisions

-- BEGIN group inheritance
-- Groups whose members are members of another group too (Bugzilla's
-- group_group_map, its "members" grant): every member of member_id, direct
-- or by regexp, is a member of grantor_id (user_groups grant_type 1,
-- derived, through any chain of these).
CREATE TABLE group_group_map (
    member_id   INTEGER NOT NULL REFERENCES groups (id),
    grantor_id  INTEGER NOT NULL REFERENCES groups (id),
    PRIMARY KEY (member_id, grantor_id)
);
CREATE INDEX group_group_map_grantor_idx ON group_group_map (grantor_id);
-- END group inheritance

-- BEGIN group grants
-- Bugzilla's other group_group_map grants: grant_type 1 (bless): members
-- of member_id may add and remove members of grantor_id; grant_type 2
-- (visibility): while usevisibilitygroups is on, members of member_id see
-- the accounts that are members of grantor_id.
CREATE TABLE group_grants (
    member_id   INTEGER NOT NULL REFERENCES groups (id),
    grantor_id  INTEGER NOT NULL REFERENCES groups (id),
    grant_type  INTEGER NOT NULL,
    PRIMARY KEY (member_id, grantor_id, grant_type)
);
CREATE INDEX group_grants_grantor_idx ON group_grants (grantor_id, grant_type);
-- END group grants

-- BEGIN credential generation
-- A counter that every change deciding who an API key signs in as moves on,
-- whoever makes it (another server process too): a key revoked or given to
-- another account, an account disabled, renamed or deleted, a membership,
-- a group's name or a bless grant between groups. A serving process keeps
-- the account behind each API key it resolved while the counter has not
-- moved (accounts/auth.py), so a request reads this one row instead of the
-- key, the account and its groups.
-- Recording a key's last use does not move it.
CREATE TABLE credential_generation (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  INTEGER NOT NULL
);
INSERT INTO credential_generation (id, value) VALUES (1, 0);
CREATE TRIGGER api_keys_update_moves_credentials AFTER UPDATE OF user_id, key_hash, revoked ON api_keys BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER api_keys_delete_moves_credentials AFTER DELETE ON api_keys BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER users_update_moves_credentials AFTER UPDATE OF id, login, real_name, disabled_text ON users BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER users_delete_moves_credentials AFTER DELETE ON users BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER user_groups_insert_moves_credentials AFTER INSERT ON user_groups BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER user_groups_update_moves_credentials AFTER UPDATE ON user_groups BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER user_groups_delete_moves_credentials AFTER DELETE ON user_groups BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER groups_update_moves_credentials AFTER UPDATE OF id, name ON groups BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER groups_delete_moves_credentials AFTER DELETE ON groups BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER group_grants_insert_moves_credentials AFTER INSERT ON group_grants BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER group_grants_update_moves_credentials AFTER UPDATE ON group_grants BEGIN UPDATE credential_generation SET value = value + 1; END;
CREATE TRIGGER group_grants_delete_moves_credentials AFTER DELETE ON group_grants BEGIN UPDATE credential_generation SET value = value + 1; END;
-- END credential generation
-- BEGIN replica waits
-- Read replicas (PostgreSQL's streaming replicas, --db-replica): where the
-- primary's write-ahead log stood (bytes from its start) after each
-- account's last write, so that its next reads come from a replica only
-- once that replica has replayed so far (read-your-writes, across every
-- server process). Unused without replicas.
CREATE TABLE replica_waits (
    user_id  INTEGER PRIMARY KEY,
    lsn      INTEGER NOT NULL
);
-- END replica waits
-- BEGIN bug generation
-- A counter that every change to what a bug search answers moves on,
-- whoever makes it (a call, the importer, a command, a repair by hand,
-- another server process): the bugs and every table a bug object reads
-- (aliases, keywords and their names, CC, groups, flags and their types,
-- see also, dependencies, custom values, the hours worked in comments, tags),
-- and
-- group inheritance. With the catalog and credential generations it
-- decides whether a search answer kept by a serving process
-- (bugs/answer_cache.py) is still the answer.
-- Its triggers are SQLite's alone: SQLite's writers take turns, so one row
-- moved in each write's own transaction makes none of them wait; on
-- PostgreSQL that row's lock would queue every concurrent bug write until
-- the one before commits, so there each such transaction notes itself in
-- bug_writes instead (below) and the generation is how many have (the
-- dialect's bug_generation_sql).
CREATE TABLE bug_generation (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  INTEGER NOT NULL
);
INSERT INTO bug_generation (id, value) VALUES (1, 0);
-- BEGIN sqlite only
CREATE TRIGGER bugs_insert_moves_bugs AFTER INSERT ON bugs BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bugs_update_moves_bugs AFTER UPDATE ON bugs BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bugs_delete_moves_bugs AFTER DELETE ON bugs BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_aliases_insert_moves_bugs AFTER INSERT ON bug_aliases BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_aliases_update_moves_bugs AFTER UPDATE ON bug_aliases BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_aliases_delete_moves_bugs AFTER DELETE ON bug_aliases BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_keywords_insert_moves_bugs AFTER INSERT ON bug_keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_keywords_update_moves_bugs AFTER UPDATE ON bug_keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_keywords_delete_moves_bugs AFTER DELETE ON bug_keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER keywords_insert_moves_bugs AFTER INSERT ON keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER keywords_update_moves_bugs AFTER UPDATE ON keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER keywords_delete_moves_bugs AFTER DELETE ON keywords BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_cc_insert_moves_bugs AFTER INSERT ON bug_cc BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_cc_update_moves_bugs AFTER UPDATE ON bug_cc BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_cc_delete_moves_bugs AFTER DELETE ON bug_cc BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_groups_insert_moves_bugs AFTER INSERT ON bug_groups BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_groups_update_moves_bugs AFTER UPDATE ON bug_groups BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_groups_delete_moves_bugs AFTER DELETE ON bug_groups BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flags_insert_moves_bugs AFTER INSERT ON flags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flags_update_moves_bugs AFTER UPDATE ON flags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flags_delete_moves_bugs AFTER DELETE ON flags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_insert_moves_bugs AFTER INSERT ON flag_types BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_update_moves_bugs AFTER UPDATE ON flag_types BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_delete_moves_bugs AFTER DELETE ON flag_types BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_see_also_insert_moves_bugs AFTER INSERT ON bug_see_also BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_see_also_update_moves_bugs AFTER UPDATE ON bug_see_also BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_see_also_delete_moves_bugs AFTER DELETE ON bug_see_also BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER dependencies_insert_moves_bugs AFTER INSERT ON dependencies BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER dependencies_update_moves_bugs AFTER UPDATE ON dependencies BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER dependencies_delete_moves_bugs AFTER DELETE ON dependencies BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_custom_values_insert_moves_bugs AFTER INSERT ON bug_custom_values BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_custom_values_update_moves_bugs AFTER UPDATE ON bug_custom_values BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_custom_values_delete_moves_bugs AFTER DELETE ON bug_custom_values BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER comments_insert_moves_bugs AFTER INSERT ON comments WHEN new.work_time <> 0 BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER comments_update_moves_bugs AFTER UPDATE OF bug_id, work_time ON comments BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER comments_delete_moves_bugs AFTER DELETE ON comments WHEN old.work_time <> 0 BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_tags_insert_moves_bugs AFTER INSERT ON bug_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_tags_update_moves_bugs AFTER UPDATE ON bug_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER bug_tags_delete_moves_bugs AFTER DELETE ON bug_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER personal_tags_insert_moves_bugs AFTER INSERT ON personal_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER personal_tags_update_moves_bugs AFTER UPDATE ON personal_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER personal_tags_delete_moves_bugs AFTER DELETE ON personal_tags BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER group_group_map_insert_moves_bugs AFTER INSERT ON group_group_map BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER group_group_map_update_moves_bugs AFTER UPDATE ON group_group_map BEGIN UPDATE bug_generation SET value = value + 1; END;
CREATE TRIGGER group_group_map_delete_moves_bugs AFTER DELETE ON group_group_map BEGIN UPDATE bug_generation SET value = value + 1; END;
-- END sqlite only
-- END bug generation
-- BEGIN bug writes
-- PostgreSQL's bug generation: every transaction that changes what the
-- bug generation's SQLite triggers above watch notes its own id here, once
-- (rows of distinct transactions never wait for each other), and the
-- generation a transaction sees is how many such transactions it sees
-- committed: the rows here plus those folded into bug_generation's value
-- (the delivery worker folds them after each round, and a serving process
-- after its writes every few seconds, deleting them and adding their count
-- in one transaction, so the sum stays). A later
-- snapshot sees every transaction an earlier one saw, so two snapshots
-- that count the same see the same such writes; a commit that changes
-- none of it (an API key's use, a login, mail sent) moves nothing.
--postgresql: CREATE TABLE bug_writes (xid xid8 PRIMARY KEY);
--postgresql: CREATE TRIGGER bugs_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bugs BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_aliases_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_aliases BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_keywords_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_keywords BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER keywords_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON keywords BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_cc_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_cc BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_groups_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_groups BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER flags_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON flags BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER flag_types_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON flag_types BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_see_also_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_see_also BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER dependencies_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON dependencies BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_custom_values_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_custom_values BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER bug_tags_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON bug_tags BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER personal_tags_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON personal_tags BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER group_group_map_notes_bug_write AFTER INSERT OR UPDATE OR DELETE ON group_group_map BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER comments_insert_notes_bug_write AFTER INSERT ON comments WHEN new.work_time <> 0 BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER comments_update_notes_bug_write AFTER UPDATE OF bug_id, work_time ON comments BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
--postgresql: CREATE TRIGGER comments_delete_notes_bug_write AFTER DELETE ON comments WHEN old.work_time <> 0 BEGIN INSERT INTO bug_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; END;
-- END bug writes

-- BEGIN bug revisions
-- Each bug's revision: a counter that every change to what the bug's object
-- shows moves, whoever makes it (a call, the importer, a command, a repair by
-- hand, another server process): the bug's row and its rows in every table
-- the object reads (aliases, keywords, CC, groups, flags, see also,
-- dependencies at both ends, custom values, the comments with hours worked).
-- A bug with no row here is at revision 0. Names shown in an object that
-- other tables hold (products, components, keywords, flag types, groups,
-- statuses, fields) move the catalog generation, accounts' names the
-- credential generation. A serving process keeps bug objects at a revision
-- (bugs/object_cache.py); an object is used while its bug's revision and
-- those generations stand. A row per bug, moved only by writes to that bug,
-- so concurrent writes to different bugs never wait for each other.
CREATE TABLE bug_revisions (
    bug_id    INTEGER PRIMARY KEY,
    revision  INTEGER NOT NULL
);
CREATE TRIGGER bugs_insert_moves_revision AFTER INSERT ON bugs BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bugs_update_moves_revision AFTER UPDATE ON bugs BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.id, 1 WHERE old.id <> new.id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bugs_delete_moves_revision AFTER DELETE ON bugs BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_aliases_insert_moves_revision AFTER INSERT ON bug_aliases BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_aliases_update_moves_revision AFTER UPDATE ON bug_aliases BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_aliases_delete_moves_revision AFTER DELETE ON bug_aliases BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_keywords_insert_moves_revision AFTER INSERT ON bug_keywords BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_keywords_update_moves_revision AFTER UPDATE ON bug_keywords BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_keywords_delete_moves_revision AFTER DELETE ON bug_keywords BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_cc_insert_moves_revision AFTER INSERT ON bug_cc BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_cc_update_moves_revision AFTER UPDATE ON bug_cc BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_cc_delete_moves_revision AFTER DELETE ON bug_cc BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_groups_insert_moves_revision AFTER INSERT ON bug_groups BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_groups_update_moves_revision AFTER UPDATE ON bug_groups BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_groups_delete_moves_revision AFTER DELETE ON bug_groups BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER flags_insert_moves_revision AFTER INSERT ON flags BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER flags_update_moves_revision AFTER UPDATE ON flags BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER flags_delete_moves_revision AFTER DELETE ON flags BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_see_also_insert_moves_revision AFTER INSERT ON bug_see_also BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_see_also_update_moves_revision AFTER UPDATE ON bug_see_also BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_see_also_delete_moves_revision AFTER DELETE ON bug_see_also BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_custom_values_insert_moves_revision AFTER INSERT ON bug_custom_values BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_custom_values_update_moves_revision AFTER UPDATE ON bug_custom_values BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER bug_custom_values_delete_moves_revision AFTER DELETE ON bug_custom_values BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.bug_id, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER dependencies_insert_moves_revision AFTER INSERT ON dependencies BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (new.blocked, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) VALUES (new.depends_on, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER dependencies_update_moves_revision AFTER UPDATE ON dependencies BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.blocked, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) VALUES (old.depends_on, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT new.blocked, 1 WHERE new.blocked NOT IN (old.blocked, old.depends_on) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT new.depends_on, 1 WHERE new.depends_on NOT IN (old.blocked, old.depends_on) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER dependencies_delete_moves_revision AFTER DELETE ON dependencies BEGIN INSERT INTO bug_revisions (bug_id, revision) VALUES (old.blocked, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) VALUES (old.depends_on, 1) ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER comments_insert_moves_revision AFTER INSERT ON comments BEGIN INSERT INTO bug_revisions (bug_id, revision) SELECT new.bug_id, 1 WHERE new.work_time <> 0 ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER comments_update_moves_revision AFTER UPDATE OF bug_id, work_time ON comments BEGIN INSERT INTO bug_revisions (bug_id, revision) SELECT new.bug_id, 1 WHERE new.work_time <> old.work_time OR new.bug_id <> old.bug_id ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.bug_id <> new.bug_id AND old.work_time <> 0 ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
CREATE TRIGGER comments_delete_moves_revision AFTER DELETE ON comments BEGIN INSERT INTO bug_revisions (bug_id, revision) SELECT old.bug_id, 1 WHERE old.work_time <> 0 ON CONFLICT (bug_id) DO UPDATE SET revision = bug_revisions.revision + 1; END;
-- END bug revisions

-- BEGIN catalog generation of bug object names
-- The names of keywords and flag types, shown in bug objects, move the
-- catalog generation too (bugs/object_cache.py keeps objects at one).
CREATE TRIGGER keywords_insert_moves_generation AFTER INSERT ON keywords BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER keywords_update_moves_generation AFTER UPDATE ON keywords BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER keywords_delete_moves_generation AFTER DELETE ON keywords BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_insert_moves_generation AFTER INSERT ON flag_types BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_update_moves_generation AFTER UPDATE ON flag_types BEGIN UPDATE catalog_generation SET value = value + 1; END;
CREATE TRIGGER flag_types_delete_moves_generation AFTER DELETE ON flag_types BEGIN UPDATE catalog_generation SET value = value + 1; END;
-- END catalog generation of bug object names
