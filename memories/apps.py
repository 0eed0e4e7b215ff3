from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        # Sessions and search never import this app: it listens to their signals.
        from memories import receivers  # noqa: F401
