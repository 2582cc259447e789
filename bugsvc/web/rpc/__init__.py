"""The reference's RPC transports, XML-RPC (/xmlrpc.cgi) and JSON-RPC
(/jsonrpc.cgi), served over the same service functions as REST.

methods.py: the method table (data). dispatch.py: finding and running a
method. jsonrpc.py / xmlrpc.py: the two wire formats.
"""
