"""The reference's RPC transports, XML-RPC (/xmlrpc.cgi) and JSON-RPC
(/jsonrpc.cgi): every operation is a method of the same name.

dispatch.py: finding and running a method. jsonrpc.py / xmlrpc.py: the two
wire formats.
"""
