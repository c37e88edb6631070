#!/bin/sh
# Starts an MCP server late, as a server that installs or warms up does: sleeps SLOW_START
# seconds (0 when unset), then runs the command it was given in its place.
sleep "${SLOW_START:-0}"
exec "$@"
