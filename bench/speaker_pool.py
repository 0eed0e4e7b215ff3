"""Where LoCoMo's gold turns are for the speaker pass (search/speakers.py
``OWN_CANDIDATES``): the share in the candidate pool that ranking scores, and in the top 20
shown, for each size of the pass, on conversations 0-4 of a database kept by
``bench/retrieval.py --keep DIR``:

    .venv/bin/python bench/speaker_pool.py DIR
"""

from __future__ import annotations

import collections
import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())

from bench.harness import django_on_embedded_servers
from bench.retrieval_sets import locomo_units

SIZES = (0, 50, 100, 200)


def main() -> None:
    with django_on_embedded_servers(Path(sys.argv[1])):
        from django.db import connection

        from bench import retrieval_api as api
        from search import feedback, ranking, speakers
        from search.service import SearchRequest, search
        from teams.access import Access

        feedback.WEIGHT = 0
        pooled: set[int] = set()
        scored = ranking.score

        def spy(candidates, *args, **kwargs):
            pooled.clear()
            pooled.update(c.message_id for c in candidates)
            return scored(candidates, *args, **kwargs)

        ranking.score = spy
        for size in SIZES:
            speakers.OWN_CANDIDATES = size
            counts = collections.Counter()
            for unit in locomo_units(range(5)).values():
                project, _ = api.project_client(unit.team, unit.project)
                access = Access(team_ids=(project.team_id,), project_ids=(project.pk,))
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT client_id, id FROM agent_sessions_message WHERE team_id = %s",
                        [project.team_id],
                    )
                    by_client = dict(cursor.fetchall())
                for q in unit.questions:
                    gold = [by_client[g] for g in q.gold if g in by_client]
                    hits = search(access, SearchRequest(q.text, limit=20)).hits
                    top = {h.message.id for h in hits}
                    for category in (q.category, "all"):
                        counts[category, "gold"] += len(gold)
                        counts[category, "pool"] += sum(g in pooled for g in gold)
                        counts[category, "top"] += sum(g in top for g in gold)
                        counts[category, "size"] += len(pooled)
                        counts[category, "questions"] += 1
            for category in ("all", "multi-hop"):
                gold = counts[category, "gold"]
                print(
                    f"pass {size}, {category}: {gold} gold turns;"
                    f" in the pool {counts[category, 'pool'] / gold:.3f},"
                    f" in the top 20 {counts[category, 'top'] / gold:.3f};"
                    f" mean pool {counts[category, 'size'] / counts[category, 'questions']:.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
