# Image for the sandbox and the worker (see docker-compose.yml). Development use: tsx runs the TypeScript directly.
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=development

# Dependencies first, so source edits do not invalidate the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY . .

# The Temporal server runs in its own container; nothing here needs the Temporal CLI.
# worker: callback receiver 8787, Prometheus exporter 9464; codec server 8234; sandbox (profile `sandbox`): 4010, 4020.
EXPOSE 8787 8234 9464 4010 4020
USER node
CMD ["npm", "run", "sandbox", "--", "--host", "0.0.0.0"]
