"""Checking a login and password against an LDAP directory, as the
reference's LDAP verifier does, with ldap3 (the optional extra `ldap`).

The parameters say where and how: LDAPserver (one or more servers,
separated by commas or spaces, tried in turn until one answers: host,
host:port, ldap://host[:port] or ldaps://host[:port]), LDAPstarttls
(StartTLS on a plain connection), LDAPbinddn ("dn:password" to search as;
empty: anonymously), LDAPBaseDN, LDAPuidattribute (the attribute the typed
login name is compared with), LDAPmailattribute (the attribute holding the
account's login; empty: the typed name is the login) and LDAPfilter (ANDed
with the uid comparison).

Certificates (ldaps:// and StartTLS) are always checked, against the
system's trusted authorities (OpenSSL's SSL_CERT_FILE and SSL_CERT_DIR
name others), and must name the server's host. Every connection, and every
answer, waits at most TIMEOUT_SECONDS.
"""

import re
import ssl
from dataclasses import dataclass

from ..errors import INTERNAL_ERROR, ServiceError


TIMEOUT_SECONDS = 10
# A directory that answers more than one entry for a uid is refused like an
# unknown one; reading two tells that apart without reading them all.
_SIZE_LIMIT = 2
_SERVER = re.compile(r"(?:(ldaps?)://)?([^\s/:,]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?/?",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Person:
    """A directory entry whose password was right.

    uid: the value of LDAPuidattribute (the account's external id).
    login: the account's login (LDAPmailattribute's value, or the uid).
    real_name: displayName, else cn ("" when neither).
    emails: every value of LDAPmailattribute (the login is one of them).
    """
    uid: str
    login: str
    real_name: str
    emails: tuple = ()


class NotInDirectory(Exception):
    """The directory has no such person, or the password is wrong (the
    reference's AUTH_NO_SUCH_USER and AUTH_LOGINFAILED: the next verifier
    is tried)."""


class DirectoryLookupFailed(ServiceError):
    """The directory could not say who the person is (the reference's
    AUTH_ERROR: the next verifier is tried, and this is the answer when
    none is left)."""

    def __init__(self, message):
        super().__init__(INTERNAL_ERROR, message)


def available():
    """True when ldap3 (the extra `ldap`) is installed."""
    try:
        import ldap3  # noqa: F401
    except ImportError:
        return False
    return True


def parse_servers(text):
    """[(use_ssl, host, port or None)] of an LDAPserver value. Raises
    ValueError naming a server that is not host[:port],
    ldap://host[:port] or ldaps://host[:port]."""
    servers = []
    for item in re.split(r"[\s,]+", text.strip()):
        if not item:
            continue
        match = _SERVER.fullmatch(item)
        port = match and match.group(3)
        if match is None or (port is not None and not 1 <= int(port) <= 65535):
            raise ValueError(f"'{item}' is not an LDAP server (host, host:port, "
                             "ldap://host[:port] or ldaps://host[:port])")
        servers.append(((match.group(1) or "").lower() == "ldaps",
                        match.group(2).strip("[]"), int(port) if port else None))
    return servers


def check(params, login, password):
    """The Person whose uid is `login` in the directory, when `password`
    is theirs.

    params: the instance parameters ({name: value}).
    Raises NotInDirectory (no single such entry, or a wrong or empty
    password); DirectoryLookupFailed (the search failed, or the entry has
    no LDAPmailattribute); ServiceError -32000 for a directory that cannot
    be used: no server set, none answers, StartTLS or a certificate
    refused, or the search account's bind refused.
    """
    # An LDAP bind with an empty password is an anonymous bind, which
    # servers accept: it proves nothing.
    if not login or not password:
        raise NotInDirectory()
    import ldap3
    from ldap3.core import exceptions
    from ldap3.utils.conv import escape_filter_chars

    connection = _connect(ldap3, exceptions, params)
    try:
        search_filter = (f"(&({params['LDAPuidattribute']}={escape_filter_chars(login)})"
                         f"{params['LDAPfilter']})")
        _bind_for_search(connection, exceptions, params, first=True)
        found = _search(connection, exceptions, params, search_filter, login, ["1.1"])
        if len(found) != 1:
            raise NotInDirectory()
        if not _bind(connection, exceptions, found[0]["dn"], password):
            raise NotInDirectory()
        mail_attribute = params["LDAPmailattribute"]
        wanted = ["displayName", "cn"] + ([mail_attribute] if mail_attribute else [])
        # Read as the person first; when they may not read their own entry,
        # as the search account (when there is one).
        try:
            entries = _search(connection, exceptions, params, search_filter, login, wanted)
        except DirectoryLookupFailed:
            entries = []
        if not entries and params["LDAPbinddn"]:
            _bind_for_search(connection, exceptions, params)
            entries = _search(connection, exceptions, params, search_filter, login, wanted)
        if len(entries) != 1:
            raise DirectoryLookupFailed(f"An error occurred while searching the directory for "
                                        f"'{login}': the entry could not be read.")
        attributes = entries[0]["attributes"]
        emails = tuple(str(value) for value in _values(attributes, mail_attribute))
        if mail_attribute and not emails:
            raise DirectoryLookupFailed(f"The LDAP attribute '{mail_attribute}' was not found.")
        names = _values(attributes, "displayName") or _values(attributes, "cn")
        return Person(uid=login, login=emails[0] if emails else login,
                      real_name=str(names[0]) if names else "", emails=emails)
    finally:
        _close(connection)


def _values(attributes, name):
    """The values of attribute `name` in an entry's attributes (any case)."""
    if not name:
        return []
    for key, value in attributes.items():
        if key.lower() == name.lower():
            return list(value) if isinstance(value, (list, tuple)) else [value]
    return []


def _connect(ldap3, exceptions, params):
    """An open connection (StartTLS done when LDAPstarttls is on) to the
    first of the LDAPserver servers that answers, not yet bound."""
    try:
        servers = parse_servers(params["LDAPserver"])
    except ValueError as error:
        raise ServiceError(INTERNAL_ERROR, f"The LDAP server setting is not valid: {error}.") \
            from None
    if not servers:
        raise ServiceError(INTERNAL_ERROR,
                           "The LDAP server for authentication has not been defined.")
    tls = ldap3.Tls(validate=ssl.CERT_REQUIRED)
    failures = []
    for use_ssl, host, port in servers:
        server = ldap3.Server(host, port=port, use_ssl=use_ssl, tls=tls, get_info=ldap3.NONE,
                              connect_timeout=TIMEOUT_SECONDS)
        connection = ldap3.Connection(server, receive_timeout=TIMEOUT_SECONDS, read_only=True,
                                      auto_referrals=False)
        try:
            connection.open()
        except exceptions.LDAPException as error:
            failures.append(f"{host}: {_reason(error)}")
            continue
        if params["LDAPstarttls"] == "1" and not use_ssl:
            try:
                started = connection.start_tls()
            except exceptions.LDAPException as error:
                started, reason = False, _reason(error)
            else:
                reason = connection.last_error or connection.result.get("description")
            if not started:
                _close(connection)
                raise ServiceError(INTERNAL_ERROR, f"Failed to start TLS with the LDAP server "
                                                   f"{host}: {reason}.")
        return connection
    raise ServiceError(INTERNAL_ERROR, "Could not connect to the LDAP server(s) "
                                       f"{', '.join(host for _, host, _ in servers)} "
                                       f"({'; '.join(failures)}).")


def _bind(connection, exceptions, dn, password):
    """True when the directory accepts `password` for `dn` (a simple bind).
    Errors: ServiceError -32000 the server stopped answering."""
    import ldap3
    try:
        return bool(connection.rebind(dn, password, authentication=ldap3.SIMPLE,
                                      read_server_info=False))
    except exceptions.LDAPBindError:
        return False
    except exceptions.LDAPException as error:
        raise _unusable(error) from None


def _bind_for_search(connection, exceptions, params, first=False):
    """Bind as LDAPbinddn's account ("dn:password"), or, when it is empty,
    stay anonymous (`first`: nobody has bound yet)."""
    dn, _, password = params["LDAPbinddn"].partition(":")
    if not dn:
        if first:
            return
        raise DirectoryLookupFailed("The directory entry could not be read anonymously.")
    if not _bind(connection, exceptions, dn, password):
        raise ServiceError(INTERNAL_ERROR, "Failed to bind to the LDAP server: "
                                           f"{connection.result.get('description')}.")


def _search(connection, exceptions, params, search_filter, login, attributes):
    """The entries (dicts with dn and attributes) under LDAPBaseDN that
    match `search_filter`; at most _SIZE_LIMIT."""
    try:
        connection.search(params["LDAPBaseDN"], search_filter, search_scope="SUBTREE",
                          attributes=attributes, size_limit=_SIZE_LIMIT)
    except exceptions.LDAPCommunicationError as error:
        raise _unusable(error) from None
    except exceptions.LDAPException as error:
        raise DirectoryLookupFailed(f"An error occurred while searching the directory for "
                                    f"'{login}': {_reason(error)}.") from None
    result = connection.result or {}
    entries = [entry for entry in connection.response or ()
               if entry.get("type") == "searchResEntry"]
    if result.get("description") not in ("success", "sizeLimitExceeded"):
        raise DirectoryLookupFailed(f"An error occurred while searching the directory for "
                                    f"'{login}': {result.get('description')}.")
    return entries


def _unusable(error):
    """The error of a directory that stopped answering mid-way."""
    return ServiceError(INTERNAL_ERROR, f"The LDAP server stopped answering: {_reason(error)}.")


def _reason(error):
    """A one-line reason from an ldap3 exception (never a traceback)."""
    parts = error.args
    while len(parts) == 1 and isinstance(parts[0], (tuple, list)):
        parts = parts[0]
    text = " ".join(" ".join(str(part) for part in parts).split()) or type(error).__name__
    return text[:300]


def _close(connection):
    try:
        connection.unbind()
    except Exception:           # a connection already gone: nothing to close
        pass
