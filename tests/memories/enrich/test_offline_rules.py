"""The offline extractor's rules on sentences as agents and people write them: what each
type takes, the fields it fills, and what it leaves alone (questions, hypotheses, code,
tool output, dead ends without a reason). Pure Python: no database."""

from __future__ import annotations

from memories.enrich.offline import matches

AGENT_SESSION = {"agent_name": "coder", "user_name": "dana", "topics": ["auth"]}
CHAT_SESSION = {"agent_name": "locomo", "user_name": "", "topics": []}
TOOL_CALL = {"role": "assistant", "tool_name": "Bash", "content": "pytest -q"}
TOOL_OUTPUT = {"role": "tool", "tool_name": "Bash", "content": "1 failed, 3 passed"}


def found(*messages, session=AGENT_SESSION, with_tools=True):
    if with_tools:
        messages = (*messages, TOOL_CALL, TOOL_OUTPUT)
    return [(statement, match) for statement, match in matches(session, messages)]


def agent(text):
    return {"role": "assistant", "content": text}


def user(text):
    return {"role": "user", "content": text}


def only(*messages, **kw):
    results = found(*messages, **kw)
    assert len(results) == 1, [m.content for _, m in results]
    return results[0]


def test_a_decision_with_its_rationale_and_the_alternative_it_rejected():
    statement, match = only(
        agent(
            "I read the config loader. We decided to use PostgreSQL instead of SQLite "
            "because the app needs concurrent writers."
        )
    )
    assert match.type == "decision"
    assert match.content.startswith("We decided to use PostgreSQL instead of SQLite")
    assert match.details["rationale"] == "the app needs concurrent writers"
    assert match.details["alternatives_considered"] == [{"option": "SQLite"}]
    assert match.details["made_by"] == "coder" and statement.speaker == "coder"
    assert match.topic == "choice:postgresql|sqlite"


def test_a_reversed_choice_has_the_same_topic_whichever_way_it_goes():
    _, first = only(user("Let's use Redis instead of Memcached for the cache."))
    _, second = only(user("Let's switch to Memcached instead of Redis for the cache."))
    assert first.topic == second.topic != ""


def test_a_finding_with_severity_category_cause_and_location():
    _, match = only(
        agent(
            "CRITICAL: the problem was that src/auth/session.py never expires tokens, "
            "a security hole."
        )
    )
    assert match.type == "finding" and match.severity == "critical"
    assert match.details["category"] == "security"
    assert match.details["location"] == {"artifact": "src/auth/session.py"}
    assert match.details["root_cause"].startswith("src/auth/session.py never expires")


def test_a_dead_end_is_a_finding_only_when_it_says_why():
    assert found(agent("That didn't work."), agent("Still failing."), agent("Hmm, not that.")) == []
    _, match = only(agent("The migration failed because the column was still referenced."))
    assert match.type == "finding" and match.details["root_cause"].startswith("the column")


def test_a_learning():
    _, match = only(agent("Turns out pytest-django needs the transactional fixture for this."))
    assert match.type == "learning"
    _, fix = only(agent("The fix was to pin numpy below 2.0 in requirements.txt."))
    assert fix.type == "learning" and fix.details["learned_by"] == "coder"


def test_a_users_preference_with_a_topic_that_ignores_its_polarity():
    statement, match = only(user("Please never squash commits when merging."))
    assert match.type == "preference" and match.confidence == "explicit"
    assert match.details["category"] == "workflow" and statement.speaker == "dana"
    _, again = only(user("Always squash commits when merging."))
    assert again.topic == match.topic != ""
    _, pair = only(user("I prefer tabs over spaces."))
    assert pair.topic == "pref:spaces|tabs"


def test_an_agents_i_prefer_is_not_the_users_preference():
    assert found(agent("I prefer to read the whole file first.")) == []


def test_questions_hypotheses_code_and_tool_output_are_left_alone():
    messages = [
        user("Should we use PostgreSQL instead of SQLite?"),
        agent("Maybe we should switch to Redis instead of Memcached because it is faster."),
        agent("If we decided to use Go, it would be faster."),
        agent("Here is the change:\n\n```python\n# We decided to use PostgreSQL instead\n```"),
        agent("> We decided to use MySQL instead of Oracle because of cost."),
        {"role": "tool", "tool_name": "Read", "content": "The problem was the cache. Decision: X"},
        {"role": "system", "content": "Always answer in French. Never use emojis."},
    ]
    assert found(*messages) == []


def test_chat_facts_have_the_speaker_as_subject_and_a_topic_where_safe():
    turns = [
        {
            "role": "user",
            "author": "Caroline",
            "content": "I moved to Boston last spring for a new job.",
        },
        {
            "role": "user",
            "author": "Melanie",
            "content": "Wow, that's so cool! How do you like it?",
        },
        {"role": "user", "author": "Melanie", "content": "I'm so happy for you, Caroline!"},
        {
            "role": "user",
            "author": "Melanie",
            "content": "My sister just adopted two cats from the shelter.",
        },
        {"role": "user", "author": "Caroline", "content": "I think it might rain tomorrow."},
    ]
    results = found(*turns, session=CHAT_SESSION, with_tools=False)
    assert [(s.speaker, m.type, m.topic, m.content) for s, m in results] == [
        (
            "Caroline",
            "fact",
            "caroline:home",
            "Caroline: I moved to Boston last spring for a new job.",
        ),
        ("Melanie", "fact", "", "Melanie: My sister just adopted two cats from the shelter."),
    ]


def test_an_assistant_answering_a_chat_without_tools_gives_no_memories():
    messages = [
        user("I have a Dell XPS laptop that is about two years old now."),
        agent("The root cause of battery wear is heat; the fix was to keep it cool."),
    ]
    [(statement, match)] = found(*messages, with_tools=False)
    assert statement.role == "user" and match.type == "fact"
    assert match.content == "Dana: I have a Dell XPS laptop that is about two years old now."


def types_of(*messages, **kw):
    return [(match.type, match.content) for _, match in found(*messages, **kw)]


def test_an_agents_statements_count_when_it_has_a_persona_though_it_calls_no_tools():
    said = agent(
        "We decided to use PostgreSQL instead of MongoDB for the ledger because we need "
        "multi-row transactions."
    )
    asked = user("Which store did we settle on for the ledger?")
    architect = {**AGENT_SESSION, "agent_persona": "Winston"}
    assert [t for t, _ in types_of(asked, said, session=architect, with_tools=False)] == [
        "decision"
    ]
    assert types_of(asked, said, with_tools=False) == []


def test_the_choices_of_a_proposed_plan_are_decisions_and_its_other_steps_are_not():
    plan = agent(
        "<proposed_plan>\n# Billing rework\n\n## Steps\n\n"
        "- Use Stripe Checkout as the hosted payment page.\n"
        "- Describe refunds as a manual step, not an automated one.\n"
        "- Add a webhook test for failed charges.\n"
        "</proposed_plan>"
    )
    assert types_of(plan) == [
        ("decision", "Use Stripe Checkout as the hosted payment page."),
        ("decision", "Describe refunds as a manual step, not an automated one."),
    ]
    assert types_of(agent("Use Stripe Checkout as the hosted payment page.")) == []


def test_what_an_agent_labels_its_plan_is_a_decision():
    assert types_of(agent("Plan: move the session cache to Redis and drop the file store.")) == [
        ("decision", "Move the session cache to Redis and drop the file store.")
    ]


def test_findings_from_a_named_cause_and_from_a_state_and_its_effect():
    messages = [
        agent("The bug: tokens are never refreshed after a password change."),
        agent("No, the stale lockfile isn't the cause."),
        agent("The worker has no retry policy configured, so failed uploads are dropped."),
    ]
    assert [t for t, _ in types_of(*messages)] == ["finding", "finding", "finding"]


def test_a_guess_or_a_person_explaining_themselves_is_not_a_finding():
    messages = [
        agent("The scheduler is likely the culprit here."),
        agent("The parser seems to be the root cause."),
        agent("I don't have access to your server, so run the command locally."),
    ]
    assert types_of(*messages) == []


def test_a_users_standing_instructions_are_preferences():
    messages = [
        user("In the status endpoint, do NOT return the full connection string ever."),
        user("The main point is that I only want one script to run every linter."),
        user("Keep it lean and use as few external packages as possible."),
    ]
    assert [t for t, _ in types_of(*messages)] == ["preference"] * 3
    assert types_of(agent("Keep it lean and use as few external packages as possible.")) == []


def test_a_users_settled_choices_for_the_project_are_decisions():
    messages = [
        user("We will only support PostgreSQL for now."),
        user("Ensure that all API tests run against the seeded database."),
    ]
    assert [t for t, _ in types_of(*messages)] == ["decision", "decision"]


def test_decisions_that_name_nothing_and_next_steps_are_not_decisions():
    messages = [
        user("Let's go with that."),
        user("Ok so lets use these for now."),
        user("Now, let's move to the server side."),
        agent("Let's go with your suggestion."),
    ]
    assert types_of(*messages) == []


def test_narration_and_requests_are_not_memories():
    messages = [
        agent("Next, I'll read the migration files to see how we decided to use UUIDs."),
        agent("Now let me check the go-git code, the problem is there."),
        user("Can you also tell the client that we decided to use a fixed price."),
    ]
    assert types_of(*messages) == []


def test_a_rule_of_a_language_is_a_learning_and_a_limitation_found_is_a_finding():
    messages = [
        agent("In Go, a nil map cannot be written to without a make call first."),
        agent("Unfortunately, the queue library has no hook for a message that expires."),
        agent("Unfortunately, I can't reach your staging server from here."),
        agent("Unfortunately, the number of guests on a booking cannot be changed."),
    ]
    assert [t for t, _ in types_of(*messages)] == ["learning", "finding"]
