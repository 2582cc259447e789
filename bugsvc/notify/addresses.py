"""Which webhook URLs may be called: http or https, no credentials in the
URL, and (unless the parameter webhooks_allow_private_addresses is on) no
host that is or resolves to a loopback, private, link-local, multicast,
reserved or unspecified address, so a webhook cannot be used to reach
services inside the server's network (server-side request forgery)."""

import ipaddress
import socket
from urllib.parse import urlsplit


_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


class AddressRefused(ValueError):
    """A URL or address that may not be called, and why."""


def forbidden(address):
    """True when IP `address` (text or ip_address) is not a public one."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified or not ip.is_global)


def parse(url):
    """(scheme, host, port, target) of a webhook URL. Errors: AddressRefused."""
    if not isinstance(url, str) or len(url) > 2048 or any(c.isspace() for c in url):
        raise AddressRefused("the URL must be an http or https URL without spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise AddressRefused("the URL is not valid") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AddressRefused("the URL must start with http:// or https:// and name a host")
    if parts.username is not None or parts.password is not None:
        raise AddressRefused("the URL must not carry a user name or password")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), target


def check_url(url, allow_private):
    """Refuse a URL that may never be called: wrong form, or a host that is
    a local name or a non-public address written out (a name that resolves
    to one is refused when called). Errors: AddressRefused."""
    _, host, _, _ = parse(url)
    if allow_private:
        return
    name = host.lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        raise AddressRefused(f"the host '{host}' is this machine")
    try:
        literal = ipaddress.ip_address(name)
    except ValueError:
        return
    if forbidden(literal):
        raise AddressRefused(f"the address {host} is not a public one")


def resolve(host, port, allow_private):
    """The addresses to connect to for `host` (resolved now): those allowed.
    Errors: AddressRefused when there is none (every address is
    non-public, or the name does not resolve)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise AddressRefused(f"the host '{host}' cannot be resolved: {exc}") from None
    addresses = []
    for family, _, _, _, sockaddr in found:
        address = sockaddr[0]
        if allow_private or not forbidden(address):
            if (family, address) not in addresses:
                addresses.append((family, address))
    if not addresses:
        raise AddressRefused(f"the host '{host}' resolves only to addresses that are not "
                             "public (loopback, private, link-local ...)")
    return addresses
