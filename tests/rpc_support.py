"""Calling the RPC transports from falcon's test client."""

import xmlrpc.client


def xmlrpc_call(client, method, params, remote_addr="127.0.0.1"):
    """(result, None), or (None, the fault's code), of one XML-RPC call whose
    struct of named parameters is `params`."""
    resp = client.simulate_post("/xmlrpc.cgi",
                                body=xmlrpc.client.dumps((params,), method, allow_none=True),
                                headers={"Content-Type": "text/xml"}, remote_addr=remote_addr)
    try:
        return xmlrpc.client.loads(resp.content)[0][0], None
    except xmlrpc.client.Fault as fault:
        return None, fault.faultCode
