"""Forget: sessions out — exported, moved to the trash, restored, or purged for good.

``lifecycle`` holds the state changes and the purge of expired trash, ``bulk`` the rules of
deleting many sessions at once, ``export`` the one export used by the API and the UI.
Sessions also fade by themselves: ``access`` counts reads, ``decay`` turns them into a
priority, ``archive`` moves unused sessions to idle, decaying and archived, and back.
"""
