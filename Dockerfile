# syntax=docker/dockerfile:1
# One production image for the worker and the codec server, and a separate development image for the sandbox.
#
#   docker build --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD) -t etims-temporal-worker .
#                                                            production image (`runtime`, the last stage)
#   docker run --env-file prod.env etims-temporal-worker     the worker:       node dist/src/cli/worker.js (the CMD)
#   docker run … etims-temporal-worker node dist/src/cli/codec-server.js       the codec server, same image
#   docker build --target sandbox -t etims-sandbox .          the emulated services: development and demos only
#
# The runtime stage holds the compiled product (dist/src, dist/workflows, dist/activities: `npm run build`) and
# the production dependencies alone, runs `node` as the unprivileged `node` user, and has no sandbox, no tsx, no
# test or lint tooling. Its configuration comes from the environment the container is given: .dockerignore keeps
# .env files and local state out of the build context. docs/deployment.md ("The production image").
#
# There is no Docker engine in CI: tools/check-production-image.sh replays the runtime stage natively. It reads
# the stage's WORKDIR, ENV, COPY, RUN and CMD lines below, so keep one instruction per line, COPY sources relative to
# the build stage's /app, the npm ci command first in its RUN line, and any other RUN a `node dist/….js`.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS base
WORKDIR /app

# Every dependency, for the build and the sandbox. Install scripts stay off (package.json `allowScripts`): the
# packages that have one (esbuild, @swc/core, protobufjs) ship their binaries as dependencies.
FROM base AS dev-deps
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

# tsc -p tsconfig.build.json (src, workflows, activities) into dist/, plus src/codec/failure-converter.cjs, then the
# workflow bundles (dist/workflow-bundles: plain and encrypted histories) made from the compiled workflows.
FROM dev-deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

# The emulated compliance and accounting services (docs/sandbox.md): a development tool, run from its TypeScript
# with the development dependencies (tsx, pdfkit, qrcode). Never the image a production worker runs.
FROM dev-deps AS sandbox
ENV NODE_ENV=development
COPY tsconfig.json ./
COPY src ./src
COPY sandbox ./sandbox
USER node
EXPOSE 4010 4020
CMD ["node", "--import", "tsx", "sandbox/main.ts", "--host", "0.0.0.0"]

# The production image (default target).
FROM base AS runtime
ENV NODE_ENV=production
# With the release in package.json, the commit names the build the worker runs as: its Worker Deployment Version's
# build id (docs/deployment.md, "Rolling out a new build"). Without it the worker refuses to start.
ARG BUILD_COMMIT=
ENV BUILD_COMMIT=${BUILD_COMMIT}
COPY package.json package-lock.json deploy/keep-own-native-binaries.cjs ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && node keep-own-native-binaries.cjs && rm keep-own-native-binaries.cjs && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/workflows ./dist/workflows
COPY --from=build /app/dist/activities ./dist/activities
# The workflow bundles `npm run build` made from that code: the worker loads one instead of bundling at start.
COPY --from=build /app/dist/workflow-bundles ./dist/workflow-bundles
# V8's code for every module a worker's start loads, compiled once here (src/cli/compile-cache.ts): each start reads
# it instead of compiling them again. Root-owned and read-only to the process, as the rest.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN node dist/src/cli/compile-cache.js
# Files stay root-owned and read-only to the process. The worker writes nothing locally, except a purchases
# file sink (PURCHASES_SINK=file:…), which needs a volume writable by uid 1000.
USER node
# worker: callback receiver 8787, Prometheus exporter 9464; codec server (same image, other command): 8234.
EXPOSE 8787 9464 8234
CMD ["node", "dist/src/cli/worker.js"]
