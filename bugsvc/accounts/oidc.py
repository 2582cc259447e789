"""Signing in with an OpenID Connect provider (the authorization code flow
with PKCE), with Authlib and its joserfc (the optional extra `oidc`).

Providers are the parameter oidc_providers: a JSON list of
{"name", "issuer", "client_id", "client_secret"} with, optionally,
"group_claim" (a claim holding a list of names) and "groups" ({a name in
that claim: the group here its members join}). An issuer is https://, or
http:// on a loopback address only (tests, local set-ups); its discovery
document must name the same issuer, and its endpoints follow the same rule.

The id_token's signature (the provider's published keys), issuer, audience,
expiry and nonce are checked by joserfc; the account is the one linked to
the provider's `sub`, else the one whose login is the e-mail address the
provider says it verified (`email_verified` true), else, while the
parameter oidc_create_accounts is on, a new one. Every call to a provider
waits at most TIMEOUT_SECONDS and reads at most MAX_ANSWER_BYTES.
"""

import ipaddress
import json
import re
import secrets
from urllib.parse import urlsplit

from ..errors import INTERNAL_ERROR, OBJECT_DOES_NOT_EXIST, USER_ERROR, ServiceError


TIMEOUT_SECONDS = 10
MAX_ANSWER_BYTES = 1024 * 1024
SECRET_MASK = "********"
SOURCE_PREFIX = "oidc:"
SCOPE = "openid email profile"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
_FIELDS = ("name", "issuer", "client_id", "client_secret", "group_claim", "groups")


class ProviderFailed(ServiceError):
    """A provider that could not be used (down, or answering nonsense)."""

    def __init__(self, name, reason):
        super().__init__(INTERNAL_ERROR, f"Signing in with {name} failed: {reason}")


class NotVerified(ServiceError):
    """A provider's answer that does not prove who signs in."""

    def __init__(self, name, reason):
        super().__init__(USER_ERROR, f"The sign-in with {name} could not be verified: {reason}")


def available():
    """True when Authlib (the extra `oidc`) is installed."""
    try:
        import authlib  # noqa: F401
        import joserfc  # noqa: F401
        import requests  # noqa: F401
    except ImportError:
        return False
    return True


# The parameter ------------------------------------------------------------------------

def allowed_url(url):
    """True for an https:// URL, or an http:// one whose host is a loopback
    address (127.0.0.0/8, ::1, localhost)."""
    parts = urlsplit(url or "")
    if parts.scheme == "https" and parts.hostname:
        return True
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def parse_providers(text):
    """The providers of an oidc_providers value (a list of dicts). Raises
    ValueError saying what is wrong."""
    if not (text or "").strip():
        return []
    try:
        providers = json.loads(text)
    except ValueError:
        raise ValueError("'oidc_providers' must be a JSON list") from None
    if not isinstance(providers, list):
        raise ValueError("'oidc_providers' must be a JSON list")
    names = set()
    for provider in providers:
        if not isinstance(provider, dict) or set(provider) - set(_FIELDS):
            raise ValueError("each provider is an object with name, issuer, client_id, "
                             "client_secret and optionally group_claim and groups")
        for key in ("name", "issuer", "client_id", "client_secret"):
            if not isinstance(provider.get(key), str) or not provider[key].strip():
                raise ValueError(f"each provider needs a '{key}'")
        name = provider["name"]
        if not _NAME.fullmatch(name):
            raise ValueError(f"'{name}' is not a provider name (letters, digits, spaces, "
                             "'.', '_' and '-', at most 40)")
        if name.lower() in names:
            raise ValueError(f"two providers are named '{name}'")
        names.add(name.lower())
        if not allowed_url(provider["issuer"]):
            raise ValueError(f"the issuer of '{name}' must be an https:// URL (http:// only on "
                             "a loopback address)")
        groups = provider.get("groups", {})
        if not isinstance(groups, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in groups.items()):
            raise ValueError(f"the groups of '{name}' must map claim values to group names")
        if not isinstance(provider.get("group_claim", "groups"), str):
            raise ValueError(f"the group_claim of '{name}' must be a claim name")
    return providers


def shown_providers(text):
    """An oidc_providers value as it is shown: every client secret masked."""
    try:
        providers = parse_providers(text)
    except ValueError:
        return text
    return json.dumps([dict(p, client_secret=SECRET_MASK) for p in providers])


def keep_secrets(new_text, old_text):
    """`new_text` with each masked client secret replaced by the stored one
    of the provider of the same name (so a value read back can be sent
    back). Raises ValueError (parse_providers), also for a masked secret of
    a provider that has none stored."""
    new = parse_providers(new_text)
    try:
        old = {p["name"].lower(): p for p in parse_providers(old_text)}
    except ValueError:
        old = {}
    for provider in new:
        if provider["client_secret"] == SECRET_MASK:
            if provider["name"].lower() not in old:
                raise ValueError(f"give the client secret of '{provider['name']}'")
            provider["client_secret"] = old[provider["name"].lower()]["client_secret"]
    return json.dumps(new) if new else ""


def provider_named(text, name):
    """The provider called `name` (any case) in the oidc_providers value
    `text`. Errors: 51 no such provider."""
    for provider in parse_providers(text):
        if provider["name"].lower() == (name or "").lower():
            return provider
    raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no sign-in provider named '{name}'.")


# Talking to a provider ------------------------------------------------------------------

def _get_json(provider, url):
    import requests
    if not allowed_url(url):
        raise ProviderFailed(provider["name"], f"it names {url}, which is neither https:// nor "
                                               "loopback.")
    try:
        with requests.get(url, timeout=TIMEOUT_SECONDS, stream=True,
                          headers={"Accept": "application/json"}) as answer:
            body = answer.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True)
            status = answer.status_code
    except requests.RequestException as error:
        raise ProviderFailed(provider["name"], f"{url} could not be reached "
                                               f"({type(error).__name__}).") from None
    if status != 200 or len(body) > MAX_ANSWER_BYTES:
        raise ProviderFailed(provider["name"], f"{url} answered {status}.")
    try:
        found = json.loads(body)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ProviderFailed(provider["name"], f"{url} did not answer a JSON object.")
    return found


def discover(provider):
    """The provider's discovery document (checked: same issuer, endpoints
    https:// or loopback)."""
    issuer = provider["issuer"].rstrip("/")
    found = _get_json(provider, issuer + "/.well-known/openid-configuration")
    if found.get("issuer", "").rstrip("/") != issuer:
        raise ProviderFailed(provider["name"], "its discovery document names another issuer.")
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(found.get(key), str) or not allowed_url(found[key]):
            raise ProviderFailed(provider["name"], f"its discovery document has no usable {key}.")
    return found


def _session(provider, redirect_uri):
    from authlib.integrations.requests_client import OAuth2Session
    return OAuth2Session(provider["client_id"], provider["client_secret"], scope=SCOPE,
                         redirect_uri=redirect_uri, code_challenge_method="S256")


def authorization(provider, redirect_uri):
    """Start a sign-in: {"url" (where the browser goes), "state", "nonce",
    "code_verifier"} (the last three kept by the browser's session until it
    comes back). Errors: -32000 the provider could not be used."""
    metadata = discover(provider)
    state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)
    url, _ = _session(provider, redirect_uri).create_authorization_url(
        metadata["authorization_endpoint"], state=state, nonce=nonce, code_verifier=verifier)
    return {"url": url, "state": state, "nonce": nonce, "code_verifier": verifier}


def verified_claims(provider, code, redirect_uri, code_verifier, nonce):
    """Exchange an authorization code and check its id_token; returns the
    token's claims. Errors: -32000 the provider could not be used; 32000 an
    id_token whose signature, issuer, audience, expiry or nonce is wrong."""
    import requests
    from authlib.common.errors import AuthlibBaseError

    metadata = discover(provider)
    try:
        token = _session(provider, redirect_uri).fetch_token(
            metadata["token_endpoint"], grant_type="authorization_code", code=code,
            code_verifier=code_verifier, timeout=TIMEOUT_SECONDS)
    except AuthlibBaseError as error:
        raise NotVerified(provider["name"], f"the provider refused the code "
                                            f"({error.error}).") from None
    except (requests.RequestException, ValueError) as error:
        raise ProviderFailed(provider["name"], f"its token endpoint could not be used "
                                               f"({type(error).__name__}).") from None
    id_token = token.get("id_token")
    if not isinstance(id_token, str):
        raise NotVerified(provider["name"], "the provider gave no id_token.")
    return check_id_token(provider, id_token, _get_json(provider, metadata["jwks_uri"]), nonce,
                          metadata["issuer"])


def check_id_token(provider, id_token, jwks, nonce, issuer):
    """The claims of `id_token` once its signature (by one of the keys in
    `jwks`), issuer, audience, expiry and nonce are right.
    Errors: 32000 (NotVerified) saying which is wrong."""
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    try:
        keys = KeySet.import_key_set(jwks)
        decoded = jwt.decode(id_token, keys)
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": provider["client_id"]},
            exp={"essential": True}, sub={"essential": True},
            nonce={"essential": True, "value": nonce}).validate(decoded.claims)
    except (JoseError, ValueError, TypeError, KeyError) as error:
        reason = getattr(error, "description", None) or type(error).__name__
        raise NotVerified(provider["name"], f"its id_token was refused ({reason}).") from None
    return decoded.claims


# The account ------------------------------------------------------------------------------

def account_of(ctx, provider, claims, may_create):
    """The id of the account `claims` (checked) sign in as: linked to the
    provider's `sub`, else the one whose login is the verified e-mail
    address, else a new one while `may_create`; the groups the provider's
    group map names for the claim's values are granted.
    Errors: 32000 no verified e-mail address, or no account while accounts
    are not created; 500 / 501 (the address taken or not acceptable)."""
    from . import external
    source = SOURCE_PREFIX + provider["name"].lower()
    email = claims.get("email")
    if claims.get("email_verified") is not True or not isinstance(email, str) or not email:
        raise ServiceError(USER_ERROR, f"{provider['name']} did not say your e-mail address is "
                                       "verified, so no account here can be matched to it.")
    name = claims.get("name") if isinstance(claims.get("name"), str) else ""
    user_id = external.account_for(ctx, source, str(claims["sub"]), email.strip(), name,
                                   create=may_create)
    if user_id is None:
        raise ServiceError(USER_ERROR, f"No account here has the address {email}, and accounts "
                                       f"are not created from {provider['name']}.")
    _grant_groups(ctx, provider, claims, user_id)
    return user_id


def _grant_groups(ctx, provider, claims, user_id):
    """Make the account a member of the groups the provider's map names for
    the values of its group claim (audited), and of the groups those are
    members of (derived: admin gives every system group); memberships are
    never taken away here."""
    from ..store import audit
    from .membership import refresh_derived
    values = claims.get(provider.get("group_claim") or "groups")
    if not isinstance(values, list) or not provider.get("groups"):
        return
    granted = False
    for value in values:
        group = provider["groups"].get(value) if isinstance(value, str) else None
        if group is None:
            continue
        row = ctx.conn.execute("SELECT id, name FROM groups WHERE lower(name) = lower(?)",
                               (group,)).fetchone()
        if row is None or ctx.conn.execute(
                "SELECT 1 FROM user_groups WHERE user_id = ? AND group_id = ? AND is_bless = 0"
                " AND grant_type = 0", (user_id, row["id"])).fetchone() is not None:
            continue
        ctx.conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, 0, 0)", (user_id, row["id"]))
        audit.record(ctx, "User", user_id, "groups", "", row["name"])
        granted = True
    if granted:
        refresh_derived(ctx.conn, [user_id])
