"""``/api/schema/``: drf-spectacular's schema view, generating one request at a time.

drf-spectacular keeps its generator's state in class attributes (an extension's target
class, imported on first use and set to None while that import fails; the view being
inspected; warning counts), so two threads generating at once can break each other. Web
processes serve with threads (``WEB_THREADS``), and two first requests for the schema in a
process answered 500 (AttributeError: 'NoneType' object has no attribute 'startswith';
upstream, tfranzel/drf-spectacular#1122, #1123 and #1368 are open). Rendering the generated
dictionary needs no lock.

Its own module: ``core.openapi`` is the schema class drf-spectacular's views import.
"""

from __future__ import annotations

import threading

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView


class SchemaView(SpectacularAPIView):
    _generating = threading.Lock()

    @extend_schema(exclude=True)  # as the view it extends: the schema is not in itself
    def get(self, request, *args, **kwargs):
        with self._generating:
            return super().get(request, *args, **kwargs)
