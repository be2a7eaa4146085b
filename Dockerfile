# A small image of Tessera: built on Debian 12 with the same packages as `make`, run as a
# non-root user with only the runtime libraries. `tessera version` reports the commit given
# as a build argument (the build stage has no git):
#   docker build --build-arg TESSERA_COMMIT=$(git rev-parse --short=12 HEAD) -t tessera .
FROM debian:12 AS build
RUN apt-get update && apt-get install -y --no-install-recommends build-essential pkg-config \
      libcurl4-openssl-dev libjansson-dev libuv1-dev libyaml-dev libssl-dev libnghttp2-dev libzip-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG TESSERA_COMMIT=unknown
RUN make tessera TESSERA_COMMIT=$TESSERA_COMMIT

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends libcurl4 libjansson4 libuv1 \
      libyaml-0-2 libssl3 libzip4 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/tessera /usr/local/bin/tessera
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/tessera"]
