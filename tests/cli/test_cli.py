"""The command line, run in-process: options, first start, the api-key command.
(tests/e2e/test_server.py runs the real server as a separate process.)"""

import io
import sqlite3

import pytest
from falcon import testing

from bugsvc.accounts import auth
from bugsvc.app import create_app
from bugsvc.cli import main
from bugsvc.cli.options import UsageError, build_parser, make_config
from bugsvc.config import Config
from bugsvc.serving.server import prepare_database
from bugsvc.store import schema
from conftest import FAST_COST


NO_ENV = {}


# Installing a database through the command line hashes the administrator's
# password at the production cost.
slow_install = pytest.mark.slow


def config_for(argv, environ):
    return make_config(build_parser().parse_args(argv), environ)


def run_cli(argv, environ=NO_ENV):
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, environ, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def stored_admin_hash(path, login="admin@example.com"):
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT password_hash FROM users WHERE login = ?", (login,)).fetchone()
        return row and row[0]
    finally:
        conn.close()


# Options ------------------------------------------------------------------------

def test_defaults_without_flags_or_environment():
    config = config_for([], NO_ENV)
    assert (config.host, config.port, config.database.text) == ("127.0.0.1", 8000, "bugsvc.sqlite")
    assert config.admin_email is None and config.admin_password is None


def test_environment_beats_defaults():
    env = {"BUGSVC_HOST": "0.0.0.0", "BUGSVC_PORT": "9001", "BUGSVC_DB": "/tmp/env.sqlite",
           "BUGSVC_ADMIN_EMAIL": "env@example.com", "BUGSVC_ADMIN_PASSWORD": "env-password"}
    config = config_for([], env)
    assert (config.host, config.port, config.database.text) == ("0.0.0.0", 9001, "/tmp/env.sqlite")
    assert (config.admin_email, config.admin_password) == ("env@example.com", "env-password")


def test_flags_beat_environment():
    env = {"BUGSVC_HOST": "0.0.0.0", "BUGSVC_PORT": "9001", "BUGSVC_DB": "/tmp/env.sqlite",
           "BUGSVC_ADMIN_EMAIL": "env@example.com", "BUGSVC_ADMIN_PASSWORD": "env-password"}
    config = config_for(["--host", "::1", "--port", "0", "--db", "flag.sqlite",
                         "--admin-email", "flag@example.com", "--admin-password", "flag-password"],
                        env)
    assert (config.host, config.port, config.database.text) == ("::1", 0, "flag.sqlite")
    assert (config.admin_email, config.admin_password) == ("flag@example.com", "flag-password")


def test_empty_environment_values_count_as_unset():
    config = config_for([], {"BUGSVC_PORT": "", "BUGSVC_DB": ""})
    assert (config.port, config.database.text) == (8000, "bugsvc.sqlite")


def test_options_after_the_subcommand_also_count():
    args = build_parser().parse_args(["--host", "h1", "api-key", "a@example.com",
                                      "--db", "x.sqlite"])
    config = make_config(args, {"BUGSVC_DB": "env.sqlite"})
    assert (config.host, config.database.text, args.email) == ("h1", "x.sqlite", "a@example.com")


@pytest.mark.parametrize("argv, env, words", [
    (["--port", "eighty"], NO_ENV, "port"),
    ([], {"BUGSVC_PORT": "70000"}, "port"),
    (["--admin-email", "not-an-address"], NO_ENV, "e-mail"),
    ([], {"BUGSVC_ADMIN_PASSWORD": "short"}, "at least 8"),
])
def test_bad_option_values_are_refused(argv, env, words):
    with pytest.raises(UsageError, match=words):
        config_for(argv, env)


@slow_install
def test_bad_option_value_exits_2_with_one_line_and_touches_nothing(tmp_path):
    path = tmp_path / "never.sqlite"
    status, out, err = run_cli(["--db", str(path), "--port", "x", "api-key", "a@example.com"])
    assert status == 2 and out == ""
    assert err.startswith("bugsvc: the port must be a number") and "Traceback" not in err
    assert not path.exists()


# First start --------------------------------------------------------------------

@slow_install
def test_generated_password_is_printed_once_and_works(tmp_path):
    path = tmp_path / "fresh.sqlite"
    out = io.StringIO()
    prepare_database(Config(database=str(path)), out).close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "Created the administrator admin@example.com."
    prefix = "Its password, shown only this once: "
    assert lines[1].startswith(prefix)
    password = lines[1][len(prefix):]
    assert len(password) >= 20
    assert auth.verify_password(password, stored_admin_hash(path))
    assert not auth.verify_password(password + "x", stored_admin_hash(path))

    again = io.StringIO()
    prepare_database(Config(database=str(path)), again).close()
    assert again.getvalue() == ""
    assert auth.verify_password(password, stored_admin_hash(path))


@slow_install
def test_two_installations_get_different_generated_passwords(tmp_path):
    outputs = []
    for name in ("one.sqlite", "two.sqlite"):
        out = io.StringIO()
        prepare_database(Config(database=str(tmp_path / name)), out).close()
        outputs.append(out.getvalue().splitlines()[1])
    assert outputs[0] != outputs[1]


@slow_install
def test_given_admin_credentials_are_used_and_not_printed(tmp_path):
    path = tmp_path / "given.sqlite"
    out = io.StringIO()
    prepare_database(Config(database=str(path), admin_email="boss@example.org",
                            admin_password="correct horse"), out).close()
    assert out.getvalue() == "Created the administrator boss@example.org.\n"
    assert auth.verify_password("correct horse", stored_admin_hash(path, "boss@example.org"))
    conn = sqlite3.connect(path)
    groups = conn.execute("SELECT COUNT(*) FROM groups").fetchone()[0]
    member_of = conn.execute(
        "SELECT COUNT(DISTINCT group_id) FROM user_groups ug JOIN users u ON u.id = ug.user_id"
        " WHERE u.login = 'boss@example.org' AND ug.is_bless = 0").fetchone()[0]
    conn.close()
    assert groups >= 14 and member_of == groups


@slow_install
def test_existing_empty_file_gets_installed(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    out = io.StringIO()
    prepare_database(Config(database=str(path), admin_password="admin-password"), out).close()
    assert "Created the administrator" in out.getvalue()
    assert auth.verify_password("admin-password", stored_admin_hash(path))


def test_newer_database_exits_2_with_message(tmp_path):
    path = tmp_path / "future.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password",
                            password_cost=FAST_COST), io.StringIO()).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.close()
    status, out, err = run_cli(["--db", str(path), "api-key", "admin@example.com"])
    assert status == 2 and out == ""
    assert "newer than this bugsvc" in err and "Traceback" not in err


# api-key --------------------------------------------------------------------------

@slow_install
def test_api_key_command_prints_a_key_that_authenticates(tmp_path):
    path = tmp_path / "keys.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password"),
                     io.StringIO()).close()
    status, out, err = run_cli(["--db", str(path), "api-key", "admin@example.com",
                                "--description", "ci"])
    assert (status, err) == (0, "")
    key = out.strip()
    assert len(key) == 40 and key.isalnum() and out == key + "\n"

    client = testing.TestClient(create_app(Config(database=str(path))))
    answer = client.simulate_get("/rest/parameters", params={"Bugzilla_api_key": key})
    assert answer.status_code == 200
    assert "insidergroup" in answer.json["parameters"]   # admin sees every parameter
    wrong = client.simulate_get("/rest/extensions", params={"Bugzilla_api_key": "x" * 40})
    assert wrong.status_code == 400 and wrong.json["code"] == 306

    conn = sqlite3.connect(path)
    description, stored = conn.execute("SELECT description, key_hash FROM api_keys").fetchone()
    conn.close()
    assert description == "ci" and key not in stored


@slow_install
def test_api_key_reads_the_database_from_the_environment(tmp_path):
    path = tmp_path / "env.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password"),
                     io.StringIO()).close()
    status, out, err = run_cli(["api-key", "admin@example.com"], {"BUGSVC_DB": str(path)})
    assert (status, err) == (0, "") and len(out.strip()) == 40


@slow_install
def test_api_key_for_unknown_account_exits_1_with_message(tmp_path):
    path = tmp_path / "keys.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password"),
                     io.StringIO()).close()
    status, out, err = run_cli(["--db", str(path), "api-key", "nobody@example.com"])
    assert status == 1 and out == ""
    assert "no account has the login 'nobody@example.com'" in err
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM api_keys").fetchone()[0] == 0
    conn.close()


@slow_install
def test_api_key_login_is_case_insensitive(tmp_path):
    path = tmp_path / "keys.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password"),
                     io.StringIO()).close()
    status, out, _ = run_cli(["--db", str(path), "api-key", "ADMIN@Example.COM"])
    assert status == 0 and len(out.strip()) == 40


# parameters ---------------------------------------------------------------------------

def installed(tmp_path):
    path = tmp_path / "params.sqlite"
    prepare_database(Config(database=str(path), admin_password="admin-password"),
                     io.StringIO()).close()
    return path


def stored_params(path):
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, value FROM params"))
    finally:
        conn.close()


@slow_install
def test_parameters_command_lists_every_parameter(tmp_path):
    path = installed(tmp_path)
    status, out, _ = run_cli(["--db", str(path), "parameters"])
    assert status == 0
    lines = out.splitlines()
    assert "requirelogin=0" in lines and "defaultseverity=enhancement" in lines
    assert len(lines) == len(stored_params(path))


@slow_install
def test_parameters_command_changes_values_and_audits_them(tmp_path):
    path = installed(tmp_path)
    status, out, err = run_cli(["parameters", "requirelogin=1",
                                "urlbase=https://bugs.example.com/"],
                               {"BUGSVC_DB": str(path)})
    assert (status, err) == (0, "")
    assert out.splitlines() == ["requirelogin: '0' -> '1'",
                                "urlbase: '' -> 'https://bugs.example.com/'"]
    assert stored_params(path)["requirelogin"] == "1"
    conn = sqlite3.connect(path)
    audited = conn.execute("SELECT user_id, class, field FROM audit_log ORDER BY id").fetchall()
    conn.close()
    assert audited == [(None, "Bugzilla::Param", "requirelogin"),
                       (None, "Bugzilla::Param", "urlbase")]
    status, out, _ = run_cli(["--db", str(path), "parameters", "requirelogin=1"])
    assert (status, out) == (0, "Nothing changed.\n")


@slow_install
def test_parameters_command_never_prints_the_smtp_password(tmp_path):
    path = installed(tmp_path)
    status, out, _ = run_cli(["--db", str(path), "parameters", "smtp_password=s3cret"])
    assert (status, out) == (0, "smtp_password: '' -> '********'\n")
    status, out, _ = run_cli(["--db", str(path), "parameters"])
    assert "smtp_password=********" in out.splitlines() and "s3cret" not in out
    assert stored_params(path)["smtp_password"] == "s3cret"


@slow_install
def test_parameters_command_restores_a_missing_row(tmp_path):
    path = installed(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM params WHERE name = 'maintainer'")
    conn.commit()
    conn.close()
    assert run_cli(["--db", str(path), "parameters", "maintainer=ops@example.com"])[0] == 0
    assert stored_params(path)["maintainer"] == "ops@example.com"


@pytest.mark.parametrize("assignment, status, words", [
    ("no_such_param=1", 1, "There is no parameter named 'no_such_param'"),
    ("maxusermatches=many", 1, "Invalid value for parameter 'maxusermatches'"),
    ("requirelogin", 2, "is not of the form NAME=VALUE"),
])
@slow_install
def test_parameters_command_refuses_bad_input_and_changes_nothing(tmp_path, assignment, status,
                                                                  words):
    path = installed(tmp_path)
    before = stored_params(path)
    result, out, err = run_cli(["--db", str(path), "parameters", "requirelogin=1", assignment])
    assert result == status and out == "" and words in err
    assert stored_params(path) == before


def test_deliver_needs_an_existing_database(tmp_path):
    status, _, err = run_cli(["--db", str(tmp_path / "missing.sqlite"), "deliver", "--once"])
    assert status == 2 and "missing.sqlite" in err
    assert not (tmp_path / "missing.sqlite").exists()


@pytest.mark.parametrize("value", ["abc", "1,-2", "5,,", "999999999"])
def test_bad_retry_delays_are_usage_errors(tmp_path, value):
    status, _, err = run_cli(["--db", str(tmp_path / "x.sqlite"), "deliver", "--retry-delays",
                              value])
    assert status == 2 and "--retry-delays must be numbers of seconds" in err


@slow_install
def test_deliver_once_on_a_database_with_nothing_due(tmp_path):
    path = installed(tmp_path)
    status, out, _ = run_cli(["--db", str(path), "deliver", "--once", "--retry-delays", "1,2"])
    assert (status, out) == (0, "Delivered what was due (0 steps).\n")
