"""LiteralFirstRouter: falcon's compiled router, with the routes whose path
has no field kept in a dictionary.

Most of bugsvc's routes are literal (Bugzilla's page addresses:
/show_bug.cgi, /editproducts.cgi, ...). falcon's CompiledRouter checks each
new route against every sibling already added, which makes building an
App cost time in the square of the number of routes; a test suite builds
an App per test. Literal routes need no tree: an exact lookup finds them,
and it answers what the tree would (falcon prefers a literal match to a
field at the same place, and compares paths as given). Which responders a
class has is found once per class, not once per App.
"""

from falcon.constants import COMBINED_METHODS
from falcon.routing import CompiledRouter, set_default_responders


_RESPONDER_NAME = {method: "on_" + method.lower() for method in COMBINED_METHODS}
_RESPONDER_NAMES = frozenset(_RESPONDER_NAME.values())


class LiteralFirstRouter(CompiledRouter):
    """A CompiledRouter that keeps literal paths in a dict.

    Routes with a field, a suffix, ASGI responders or whitespace (falcon's
    error) go to falcon's tree, as do all when default_to_on_request is set.
    Errors: as CompiledRouter.add_route (a coroutine responder in a WSGI
    app, whitespace in a path, the same literal path added twice).
    """

    # class -> ({HTTP method: responder name}, {HTTP method: falcon's default responder})
    _responders_of_class = {}

    def __init__(self):
        super().__init__()
        self._literal = {}

    def _method_map(self, resource):
        """{HTTP method: responder} of `resource` as falcon maps it, with
        falcon's default responders (405, OPTIONS) for the methods it lacks."""
        if not _RESPONDER_NAMES.isdisjoint(getattr(resource, "__dict__", ())):
            method_map = self.map_http_methods(resource)     # responders set per instance
            set_default_responders(method_map, asgi=False)
            self._require_non_coroutine_responders(method_map)
            return method_map
        known = self._responders_of_class.get(type(resource))
        if known is None:
            method_map = self.map_http_methods(resource)
            names = {method: _RESPONDER_NAME[method] for method in method_map}
            set_default_responders(method_map, asgi=False)
            self._require_non_coroutine_responders(method_map)
            defaults = {method: responder for method, responder in method_map.items()
                        if method not in names}
            known = self._responders_of_class[type(resource)] = (names, defaults)
        names, defaults = known
        return {**defaults, **{method: getattr(resource, name) for method, name in names.items()}}

    def add_route(self, uri_template, resource, **kwargs):
        """Add `resource` at `uri_template` (see CompiledRouter.add_route)."""
        if ("{" in uri_template or set(kwargs) - {"compile"}
                or any(character.isspace() for character in uri_template)
                or self._options.default_to_on_request):
            super().add_route(uri_template, resource, **kwargs)
            return
        if uri_template in self._literal:
            raise ValueError(f"the route {uri_template!r} is added twice")
        self._literal[uri_template] = (resource, self._method_map(resource), uri_template)

    def find(self, uri, req=None):
        """(resource, method map, path fields, template) for `uri`, or None."""
        hit = self._literal.get(uri)
        if hit is not None:
            return hit[0], hit[1], {}, hit[2]
        return super().find(uri, req)
