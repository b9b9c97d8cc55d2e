# digestbot: `digestbot run` (scheduler + chat adapters) as a non-root user, the database on /data.
#   docker build -t digestbot .
#   docker run -d --env-file .env -v digestbot-data:/data \
#     -v "$PWD/digest.toml:/config/digest.toml:ro" digestbot
# See docs/deploy.md (compose with a local model server, systemd, metrics).
#
# The base is the Python the tests run on (3.11), pinned by digest so a rebuild gets the same image;
# the dependencies are the versions of requirements.lock (regenerate it with the command at its top).

FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7 AS build
WORKDIR /src
COPY pyproject.toml README.md CHANGELOG.md requirements.lock ./
COPY docs/deploy.md ./docs/
COPY analysis ./analysis
COPY adapters ./adapters
COPY bot ./bot
# Wheels of the project and of exactly the locked dependencies, installed below without build files.
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && pip wheel --no-cache-dir --wheel-dir /wheels -r requirements.lock \
    && cp requirements.lock /wheels/

FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7
# git reads local clones (subscriptions with git_dir); versions follow the base image's Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin digestbot \
    && mkdir -p /data /config \
    && chown digestbot:digestbot /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels -r /wheels/requirements.lock \
    && pip install --no-cache-dir --no-index --no-deps /wheels/digestbot-*.whl \
    && rm -rf /wheels

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DIGEST_DB=/data/digest.db \
    DIGEST_CONFIG=/config/digest.toml \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9100 \
    LOG_FORMAT=json

USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
# /metrics and /healthz. Slack runs in Socket Mode (an outgoing connection: nothing to expose); for
# Slack's HTTP mode publish SLACK_PORT yourself (docker run -p 3000:3000).
EXPOSE 9100
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot.healthcheck"]
# -v: a line per run (INFO); the default level shows only warnings and errors.
CMD ["digestbot", "-v", "run"]
