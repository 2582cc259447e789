"""How mail leaves, by the parameter mail_delivery_method: SMTP (stdlib
smtplib), Test (every mail appended to `mailer.testfile` beside the
database file, or in the working directory of the process when the database
is PostgreSQL's, for trying things out and for teaching) or None (nothing is
sent).

SMTP: `smtpserver` is host[:port]; with smtp_ssl on the connection is TLS
from the start (port 465 unless given), else plain (port 25 unless given).
When smtp_username is set the password is sent only over an encrypted
connection: a plain one is upgraded with STARTTLS (the server's certificate
checked), and a server that offers no STARTTLS gets no credentials (the
mail is parked, saying why). One connection carries a whole batch.
"""

import smtplib
import socket
import ssl
import threading
from pathlib import Path


SMTP_TIMEOUT = 30
TEST_FILE = "mailer.testfile"
_append_lock = threading.Lock()


class MailFailure(Exception):
    """A mail not accepted. permanent: trying again will not help (the
    server refused it for good: a 5xx answer, or a set-up that cannot work)."""

    def __init__(self, text, permanent=False):
        super().__init__(text)
        self.permanent = permanent


def test_file(config):
    """Where the Test method writes: mailer.testfile beside the database
    file, or in the process's working directory when the database is no
    file of this host (PostgreSQL's)."""
    if not config.database.is_file:
        return Path.cwd() / TEST_FILE
    return config.database.path.resolve().parent / TEST_FILE


def transport(params, config):
    """The transport the parameters choose (params: {name: value}), or None
    for mail_delivery_method None."""
    method = params["mail_delivery_method"]
    if method == "SMTP":
        return SmtpTransport(params["smtpserver"], params["smtp_username"],
                             params["smtp_password"], params["smtp_ssl"] == "1")
    if method == "Test":
        return TestFileTransport(test_file(config))
    return None


class TestFileTransport:
    """Appends each mail to a file, one after the other, as sent."""

    def __init__(self, path):
        self.path = Path(path)

    def open(self):
        pass

    def send(self, sender, recipient, mail):
        text = mail.as_string()
        with _append_lock, open(self.path, "a", encoding="utf-8", newline="\n") as out:
            try:
                import fcntl
                fcntl.flock(out, fcntl.LOCK_EX)       # other processes append too
            except ImportError:                       # Windows: one process anyway
                pass
            out.write(text if text.endswith("\n") else text + "\n")
            out.write("\n")

    def close(self):
        pass


class SmtpTransport:
    """One SMTP connection for a batch of mails."""

    def __init__(self, server, username, password, use_ssl):
        self.host, self.port = host_and_port(server, 465 if use_ssl else 25)
        self.username, self.password, self.use_ssl = username, password, use_ssl
        self._smtp = None

    def open(self):
        """Connect (and authenticate). Errors: MailFailure."""
        context = ssl.create_default_context()
        try:
            if self.use_ssl:
                smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=SMTP_TIMEOUT,
                                        context=context)
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT)
            smtp.ehlo()
            if self.username:
                if not self.use_ssl:
                    if not smtp.has_extn("starttls"):
                        smtp.close()
                        raise MailFailure(
                            f"{self.host}:{self.port} offers no STARTTLS: the SMTP password is "
                            "not sent over an unencrypted connection (set smtp_ssl, or use a "
                            "server that offers STARTTLS)", permanent=True)
                    smtp.starttls(context=context)
                    smtp.ehlo()
                smtp.login(self.username, self.password)
        except smtplib.SMTPResponseException as exc:
            raise MailFailure(f"{self.host}:{self.port}: {exc.smtp_code} "
                              f"{_text(exc.smtp_error)}", exc.smtp_code >= 500) from None
        except (OSError, smtplib.SMTPException, ssl.SSLError) as exc:
            raise MailFailure(f"cannot reach {self.host}:{self.port}: {exc}") from None
        self._smtp = smtp

    def send(self, sender, recipient, mail):
        """Send one mail. Errors: MailFailure (the connection is closed when
        it failed, and opened again by the next send)."""
        if self._smtp is None:
            self.open()
        try:
            self._smtp.send_message(mail, from_addr=sender, to_addrs=[recipient])
        except smtplib.SMTPRecipientsRefused as exc:
            code, text = exc.recipients.get(recipient, (450, b"refused"))
            raise MailFailure(f"{recipient} refused: {code} {_text(text)}", code >= 500) from None
        except smtplib.SMTPResponseException as exc:
            self.close()
            raise MailFailure(f"{exc.smtp_code} {_text(exc.smtp_error)}",
                              exc.smtp_code >= 500) from None
        except (OSError, socket.timeout, smtplib.SMTPException) as exc:
            self.close()
            raise MailFailure(f"sending to {self.host}:{self.port} failed: {exc}") from None

    def close(self):
        if self._smtp is not None:
            try:
                self._smtp.quit()
            except (OSError, smtplib.SMTPException):
                self._smtp.close()
            self._smtp = None


def host_and_port(server, default_port):
    """(host, port) of a smtpserver value: host, host:port, [v6] or [v6]:port."""
    server = server or "localhost"
    if server.startswith("["):
        host, _, rest = server[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() \
            else default_port
    host, sep, port = server.partition(":")
    return host, int(port) if sep and port.isdigit() else default_port


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
