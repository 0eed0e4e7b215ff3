"""sessions.capture.redaction: every kind of secret caught, and
ordinary text, hashes and code left alone.

The fake secrets below have the real shapes (prefix, alphabet, length); none is live.
"""

import time

import pytest

from sessions.capture.redaction import is_secret_key, redact, redact_json

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF0qCGEn1ndUtwprd6HzAnjcvTSHE\n"
    "Proc-Type: 4,ENCRYPTED\n"
    "3xfn/ygWyF0qCGEn1ndUtwprd6HzAnjcvTSHE==\n"
    "-----END RSA PRIVATE KEY-----"
)

# (text, expected text); each is exactly one redaction.
POSITIVE = [
    # provider keys
    (
        "export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEf0123456789_abcdefGHIJKL-xyzAA",
        "export ANTHROPIC_API_KEY=[REDACTED:anthropic_key]",
    ),
    ("key: sk-ant-admin01-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2", "key: [REDACTED:anthropic_key]"),
    (
        "client = OpenAI(api_key='sk-AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789')",
        "client = OpenAI(api_key='[REDACTED:openai_key]')",
    ),
    ("use sk-proj-Ab3dEfGh1jKlMnOp_QrStUvWx-yz now", "use [REDACTED:openai_key] now"),
    ("aws id AKIAIOSFODNN7EXAMPLE, ok", "aws id [REDACTED:aws_access_key_id], ok"),
    ("ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws_access_key_id]"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED:aws_secret_access_key]",
    ),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEYab",
        "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_access_key]",
    ),
    (
        "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r",
        "git clone https://[REDACTED:github_token]@github.com/o/r",
    ),
    ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"),
    ("ghu_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"),
    ("ghs_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"),
    ("ghr_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV",
        "[REDACTED:github_token]",
    ),
    ("glpat-xYz123AbC456dEf789gH", "[REDACTED:gitlab_token]"),
    ("SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "SLACK=[REDACTED:slack_token]"),
    ("xoxp-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    ("xoxa-2-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    ("xoxr-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    ("xoxs-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    (
        "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "POST [REDACTED:slack_webhook]",
    ),
    ("maps key AIzaSyA-1234567890abcdefghijklmnopqrstu.", "maps key [REDACTED:google_api_key]."),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED:stripe_key]"),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe_key]"),
    ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "[REDACTED:stripe_key]"),
    (
        "//registry.npmjs.org/:_authToken=npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "//registry.npmjs.org/:_authToken=[REDACTED:npm_token]",
    ),
    ("HF hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "HF [REDACTED:huggingface_token]"),
    # JWTs, bearer headers, private keys
    (
        "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        "token [REDACTED:jwt] end",
    ),
    (
        "curl -H 'Authorization: Bearer abc123def456ghi789' https://api.example.com",
        "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' https://api.example.com",
    ),
    (
        'headers = {"Authorization": "Bearer 9f8e7d6c5b4a3f2e1d0c"}',
        'headers = {"Authorization": "Bearer [REDACTED:bearer_token]"}',
    ),
    ("authorization: basic dXNlcjpwYXNzd29yZA==", "authorization: basic [REDACTED:bearer_token]"),
    (f"key:\n{PEM}\nafter", "key:\n[REDACTED:private_key]\nafter"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n",
        "[REDACTED:private_key]",
    ),  # cut off before its END line
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg==\n-----END PRIVATE KEY-----",
        "[REDACTED:private_key]",
    ),
    # URLs with credentials: user and host stay
    (
        "DATABASE_URL postgres://alice:pa55word@db.example.com:5432/app",
        "DATABASE_URL postgres://alice:[REDACTED:password]@db.example.com:5432/app",
    ),
    ("redis://default:s3cret@cache:6379/0", "redis://default:[REDACTED:password]@cache:6379/0"),
    ("postgres://user:pass@host/db", "postgres://user:[REDACTED:password]@host/db"),
    # assignments: env, shell, flags
    ("PASSWORD=hunter2", "PASSWORD=[REDACTED:password]"),
    ("export DB_PASSWORD=changeme", "export DB_PASSWORD=[REDACTED:password]"),
    ("SMTP_PASS=letmein", "SMTP_PASS=[REDACTED:password]"),
    (
        "docker run -e POSTGRES_PASSWORD=example postgres",
        "docker run -e POSTGRES_PASSWORD=[REDACTED:password] postgres",
    ),
    ("mysql --password=hunter2 -u root", "mysql --password=[REDACTED:password] -u root"),
    ("GITHUB_TOKEN=abcdef", "GITHUB_TOKEN=[REDACTED:token]"),
    ("CLIENT_SECRET=xyz", "CLIENT_SECRET=[REDACTED:secret]"),
    # config / YAML / JSON / code literals
    ('DB_PASS="s3cr3t"', 'DB_PASS="[REDACTED:password]"'),
    ('{"api_key": "abcd1234efgh"}', '{"api_key": "[REDACTED:api_key]"}'),
    ('{"password":"correct horse battery staple"}', '{"password":"[REDACTED:password]"}'),
    ("secret: s3cr3t!", "secret: [REDACTED:secret]"),
    ("password: 'hunter2'", "password: '[REDACTED:password]'"),
    ("password: hunter2.", "password: [REDACTED:password]."),
    ("SECRET_KEY = 'django-insecure-abc'", "SECRET_KEY = '[REDACTED:secret]'"),
    ("x-api-key: abc123xyz", "x-api-key: [REDACTED:api_key]"),
    ("requests.get(url, token=abc123def)", "requests.get(url, token=[REDACTED:token])"),
    ("refresh_token => 'r1-abc'", "refresh_token => '[REDACTED:token]'"),
    ("apiKey: `live-123-key`", "apiKey: `[REDACTED:api_key]`"),
    ('$password = "hunter2";', '$password = "[REDACTED:password]";'),
    (
        'cat .env -> {\\"password\\": \\"hunter2\\"}',
        'cat .env -> {\\"password\\": \\"[REDACTED:password]\\"}',
    ),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE, ids=[t[:40] for t, _ in POSITIVE])
def test_each_kind_of_secret_is_redacted(text, expected):
    assert redact(text) == (expected, 1)


NEGATIVE = [
    # hashes, ids, ordinary words
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the build",
    "short sha 3f2a9c1 and tree a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "The password: must be 8 characters long",
    "Reset your password and rotate the API token; the secret is safe.",
    "the secret: the answer is 42",
    "Bearer tokens are sent in the Authorization header",
    "AKIA is the prefix of AWS access keys",
    "QWERTYAKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9 is only a JWT header",
    "Use scikit-learn (sk-learn-compatible-estimator-wrapper)",
    "task-1234567890abcdefghijklmnop",
    "tokens: 4096",
    "passwd: files systemd",
    "secret_santa: Bob",
    "bypass=True",
    # code: the value is an expression, not a literal
    'password = request.POST["password"]',
    "token = get_token()",
    "token = token.strip()",
    "token = None",
    'api_key = os.environ["OPENAI_API_KEY"]',
    'SECRET_KEY = env("SECRET_KEY")',
    "password = settings.DB_PASSWORD",
    "self.password = password",
    '{"password": password}',
    "def login(password: str = None):",
    "api_key: Optional[str] = None",
    "password_hash = make_password(raw)",
    "password = new_password",
    "token = refresh_token",
    "secret: classified",
    "max_tokens=1024",
    '"input_tokens": 12, "output_tokens": 5',
    "token_count = 5",
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "if password == '':",
    "password != confirm",
    'headers = {"Authorization": f"Bearer {token}"}',
    # references and placeholders
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "PASSWORD=$DB_PASSWORD",
    'export TOKEN="${TOKEN}"',
    "password: ********",
    "password: !vault |",
    'api_key="YOUR_API_KEY"',
    'api_key = "<your-api-key>"',
    'password = ""',
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_ACCESS_TOKEN",
    "Authorization: Bearer ACCESS_TOKEN",
    "postgres://user:${DB_PASSWORD}@db/app",
    # URLs without a password
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "postgres://user@localhost/db",
    "https://example.com/a:b/c@d",
    "http://[::1]:8000/path",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_text_hashes_and_code_stay(text):
    assert redact(text) == (text, 0)


def test_counts_every_secret_and_keeps_the_rest_verbatim():
    text = (
        "Deploying 😀 (שלום, مرحبا)\n"
        "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        "psql postgres://app:pa55@db/app -c 'select 1'\n"
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\n"
        "PASSWORD=hunter2 ./run.sh\n"
    )
    redacted, count = redact(text)
    assert count == 3
    assert redacted == (
        "Deploying 😀 (שלום, مرحبا)\n"
        "export GITHUB_TOKEN=[REDACTED:github_token]\n"
        "psql postgres://app:[REDACTED:password]@db/app -c 'select 1'\n"
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\n"
        "PASSWORD=[REDACTED:password] ./run.sh\n"
    )
    # Redacting again finds nothing more.
    assert redact(redacted) == (redacted, 0)


def test_a_secret_inside_another_rule_is_counted_once():
    assert redact('"api_key": "sk-AbCdEf0123456789AbCdEf0123456789"') == (
        '"api_key": "[REDACTED:openai_key]"',
        1,
    )
    assert redact("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig") == (
        "Authorization: Bearer [REDACTED:jwt]",
        1,
    )


def test_empty_text():
    assert redact("") == ("", 0)


def test_redact_json_walks_structures_and_secret_named_keys():
    value = {
        "password": "hunter",  # a literal under a secret-named key, even without a digit
        "nested": [
            {"client_secret": "abc", "access_token": "", "api_key": "<your key>"},
            "see ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            ("PASSWORD=x",),
        ],
        "token_count": 5,
        "tokens": "many",
        "secret": None,
        "AKIAIOSFODNN7EXAMPLE": 1,
        "text": "مرحبا 😀",
    }
    redacted, count = redact_json(value)
    assert redacted == {
        "password": "[REDACTED:password]",
        "nested": [
            {"client_secret": "[REDACTED:secret]", "access_token": "", "api_key": "<your key>"},
            "see [REDACTED:github_token]",
            ("PASSWORD=[REDACTED:password]",),
        ],
        "token_count": 5,
        "tokens": "many",
        "secret": None,
        "[REDACTED:aws_access_key_id]": 1,
        "text": "مرحبا 😀",
    }
    assert count == 5
    assert value["password"] == "hunter"  # the input is not changed


def test_redact_json_keeps_a_partial_redaction_under_a_secret_key():
    assert redact_json({"token": "Bearer-ish sk-AbCdEf0123456789AbCdEf0123456789"}) == (
        {"token": "Bearer-ish [REDACTED:openai_key]"},
        1,
    )


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("db_pass", True),
        ("api-key", True),
        ("SECRET_KEY", True),
        ("access_token", True),
        ("bypass", False),
        ("token_count", False),
        ("max_tokens", False),
        ("secrets", False),
    ],
)
def test_is_secret_key(name, secret):
    assert is_secret_key(name) is secret


def _seconds(text: str) -> float:
    # CPU time: the shared machine's other load must not fail this test.
    start = time.process_time()
    redact(text)
    return time.process_time() - start


def test_five_megabytes_in_linear_time():
    block = (
        "def login(request):\n"
        '    password = request.POST["password"]\n'
        "    token = get_token()  # commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\n"
        "    PASSWORD=hunter2 sk-AbCdEf0123456789AbCdEf0123456789 AKIAIOSFODNN7EXAMPLE\n"
        "    url = 'postgres://u:p4ss@h/db'  # Authorization: Bearer abc123def456\n"
        "Plain prose about tokens, secrets and passwords, 😀 שלום مرحبا.\n"
    )
    text = block * (5_000_000 // len(block))
    start = time.process_time()
    redacted, count = redact(text)
    elapsed = time.process_time() - start
    assert count == 5 * (5_000_000 // len(block))
    assert "hunter2" not in redacted and "p4ss" not in redacted
    # A quadratic pass would take minutes on 5 MB; linear takes about a second.
    assert elapsed < 15


@pytest.mark.parametrize(
    "unit",
    [
        "a",
        "password=",
        "password_",
        '"password": "',
        "token:",
        "sk-",
        "eyJaaaaaaaaaa.",
        "-----BEGIN RSA PRIVATE KEY-----",
        "a://b:",
        "Authorization: Bearer ",
        '\\"password\\": \\"',
    ],
)
def test_adversarial_input_stays_linear(unit):
    # The "=1" makes the assignment rule run over the whole (single-line) text.
    text = unit * (2_000_000 // len(unit)) + "=1"
    assert _seconds(text) < 10
