from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        # Sessions and search never import this app: it listens to their signals and
        # registers into their hooks.
        from memories import receivers  # noqa: F401
        from memories.derived import MemoriesDerived
        from memories.diary.archive_section import SECTION as DIARY
        from memories.diary.context import diary_sections
        from memories.portable.project_section import SECTION as PROJECT_MEMORIES
        from memories.portable.session_section import SECTION as MEMORIES_SECTION
        from memories.retrieve.context import memory_sections
        from memories.retrieve.keys import evidence_messages
        from search import context_sections, extra_keys
        from sessions import derived
        from sessions.portable import attachments, sections

        # The diary first: a question about a person is answered from their diary first.
        context_sections.register(diary_sections)
        context_sections.register(memory_sections)
        extra_keys.register(evidence_messages)
        attachments.register(MEMORIES_SECTION)
        sections.register(PROJECT_MEMORIES)
        sections.register(DIARY)
        derived.register(MemoriesDerived())
