"""The search page: one box, hybrid by default, the list's filters; results grouped by
session with their best messages, words highlighted, relevance as a percentage.

Bad input never reaches the search: the form says what is wrong on the page. Anything the
search itself trips on is caught, logged and shown as a message, never a server error.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, transaction
from django.shortcuts import render

from search.service import SearchRequest, search, searched_filters, sessions_with_entity
from web.forms import MAX_SEARCH_PAGE, SEARCH_PAGE_SIZE, SearchForm
from web.scope import Workspace, team_required
from web.views.sessions import with_workspace_project

logger = logging.getLogger(__name__)

ENTITY_SESSIONS = 50
# Hybrid/keyword hits with no keyword in common and almost no semantic closeness
# (relevance rounds to 0%) only bury the real ones.
MIN_RELEVANCE = 0.01


@team_required
def search_page(request):
    workspace = Workspace.of(request)
    has_query = any(request.GET.get(k) for k in ("q", "entity", "entity_type"))
    form = SearchForm(
        with_workspace_project(request, workspace) if request.GET else None,
        projects=workspace.projects,
    )
    context = {"form": form, "state": "empty", "results": [], "page": 1}
    if not form.is_bound or not has_query:
        if form.is_bound:
            form.is_valid()  # show mistakes in the filters even without a query
        return render(request, "web/search.html", context)
    if not form.is_valid():
        context["state"] = "invalid"
        return render(request, "web/search.html", context)

    data = form.cleaned_data
    query, page = data["q"].strip(), data["page"]
    filters = searched_filters(form.filters, data.get("include_archived", False))
    access = workspace.narrowed(data.get("project"))
    try:
        with transaction.atomic():
            if query:
                wanted = page * SEARCH_PAGE_SIZE
                result = search(
                    access,
                    SearchRequest(
                        query,
                        mode=data.get("mode") or "hybrid",
                        filters=filters,
                        limit=wanted,
                        # Semantic mode ranks by meaning alone: keep its whole list.
                        min_relevance=0.0 if data.get("mode") == "semantic" else MIN_RELEVANCE,
                        group_by_session=True,
                        include_archived=data.get("include_archived", False),
                    ),
                )
                groups = result.sessions
                context.update(
                    state="results" if groups else "none",
                    results=groups[(page - 1) * SEARCH_PAGE_SIZE :],
                    more=len(groups) >= wanted and page < MAX_SEARCH_PAGE,
                    took_ms=round(result.took_ms),
                )
            else:
                found = sessions_with_entity(access, filters, ENTITY_SESSIONS)
                context.update(state="entity" if found else "none", results=found)
    except DatabaseError:
        logger.exception("search failed for %r", query[:200])
        context.update(
            state="error",
            error="The search could not run with this query. Try fewer or simpler words, "
            "or remove special characters.",
        )
    context.update(page=page, query=query, next_page=page + 1)
    return render(request, "web/search.html", context)
