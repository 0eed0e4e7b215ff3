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
