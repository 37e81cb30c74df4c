# One image for every service (choose with the command). Untested on this machine: it has no Docker engine.
FROM node:20-slim
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY . .
RUN pnpm install --frozen-lockfile && node scripts/build.mjs --quiet
ENV NODE_ENV=production
# The platform listens on loopback unless HOST is set; in a container the published port arrives from outside it.
ENV HOST=0.0.0.0 OPS_HOST=0.0.0.0
EXPOSE 8080
CMD ["node", "--max-semi-space-size=2", "services/embedded/dist/main.js"]
