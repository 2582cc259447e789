"""The address a request comes from, for throttling failed sign-ins and for
login tokens bound to an address.

It is the socket's peer, unless that peer is a trusted proxy (the
--trusted-proxies option; none by default): then it is read from
X-Forwarded-For, right to left, past the trusted proxies, up to the first
address that is not one. Everything left of that was written by the client
and is not believed; without trusted proxies the header is never read, so a
client cannot choose the address it is counted under.
"""

import ipaddress


def parse_networks(text):
    """The networks in `text`: addresses or CIDR networks separated by
    commas or spaces ("10.0.0.1, 192.168.0.0/16 ::1"). Returns a tuple of
    ip_network. Errors: ValueError naming the first entry that is neither."""
    networks = []
    for item in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"'{item}' is not an IP address or network") from None
    return tuple(networks)


def _address(text):
    """The ip_address in `text` (a bare address, or a bracketed IPv6 one
    with or without a port); None when it is not one."""
    text = (text or "").strip()
    if text.startswith("[") and "]" in text:
        text = text[1:text.index("]")]
    elif text.count(":") == 1:           # IPv4 with a port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def in_networks(address, networks):
    """True when `address` (text or an ip_address; an IPv4-mapped IPv6 one
    counts as its IPv4) is in one of `networks` (parse_networks); False for
    text that is no address."""
    if not networks:
        return False
    if isinstance(address, str):
        address = _address(address)
    if address is None:
        return False
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


def client_address(remote_addr, forwarded_for, trusted):
    """The client's address of a request.

    remote_addr: the socket peer's address. forwarded_for: the
    X-Forwarded-For header (several headers joined with commas), or None.
    trusted: the trusted proxies' networks (parse_networks).
    """
    remote_addr = remote_addr or ""
    if not trusted or not forwarded_for or not in_networks(_address(remote_addr), trusted):
        return remote_addr
    client = remote_addr
    for hop in reversed(forwarded_for.split(",")):
        address = _address(hop)
        if address is None:
            break                        # not an address: believe nothing further left
        client = str(address)
        if not in_networks(address, trusted):
            break
    return client


def scheme(url_scheme, remote_addr, forwarded_proto, trusted):
    """The scheme the client used: the socket's (`url_scheme`), or what a
    trusted proxy forwarded in X-Forwarded-Proto (its first value); the
    header of anyone else is not believed."""
    if forwarded_proto and trusted and in_networks(_address(remote_addr or ""), trusted):
        value = forwarded_proto.split(",")[0].strip().lower()
        if value in ("http", "https"):
            return value
    return url_scheme
