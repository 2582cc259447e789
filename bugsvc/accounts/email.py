"""E-mail addresses as the caller may see them."""


def visible_email(ctx, address):
    """`address`, or its part before '@' for logged-out callers when the
    parameter webservice_email_filter is on."""
    if address and not ctx.caller.is_logged_in and ctx.param_is_on("webservice_email_filter"):
        return address.split("@", 1)[0]
    return address
