# digestbot: `digestbot run` (scheduler + chat adapters) as a non-root user, the database on /data.
#   docker build -t digestbot .
#   docker run -d --env-file .env -v digestbot-data:/data \
#     -v "$PWD/digest.toml:/config/digest.toml:ro" digestbot
# See docs/deploy.md (compose with a local model server, systemd, metrics).

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY analysis ./analysis
COPY adapters ./adapters
COPY bot ./bot
# A wheel of the project and its dependencies, installed into the runtime image without build files.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12-slim
# git reads local clones (subscriptions with git_dir); versions follow the base image's Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin digestbot \
    && mkdir -p /data /config \
    && chown digestbot:digestbot /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels /wheels/digestbot-*.whl \
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
# 9100: /metrics and /healthz; 3000: Slack HTTP mode (SLACK_PORT), when used instead of Socket Mode.
EXPOSE 9100 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot.healthcheck"]
# -v: a line per run (INFO); the default level shows only warnings and errors.
CMD ["digestbot", "-v", "run"]
