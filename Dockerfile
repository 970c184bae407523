# The durabench worker image (docker-compose.yml's `worker` and `init` services).
# Sandboxes run on the Docker daemon of the worker's host, reached through its socket.
FROM python:3.12.8-slim-bookworm

# npm installs agent CLIs (claude-code, codex-cli, gemini-cli) into task images that lack them;
# tzdata lets usage-cap messages name their zone ("resets 4pm (Europe/Berlin)").
RUN apt-get update \
    && apt-get install -y --no-install-recommends npm tzdata \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md worker.py ./
COPY durabench ./durabench
COPY workflows ./workflows
COPY activities ./activities
COPY runtime ./runtime
COPY starter ./starter
RUN pip install --no-cache-dir .

ENV DURABENCH_HOME=/var/lib/durabench \
    DURABENCH_LOG_LEVEL=info \
    PYTHONUNBUFFERED=1
STOPSIGNAL SIGTERM
CMD ["python", "worker.py"]
