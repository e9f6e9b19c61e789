#!/usr/bin/env bash
# Checks the Prometheus alert rules of docs/operations/monitoring with Debian's promtool
# (scripts/setup-tests.sh installs it): the rules parse, and each alert's unit tests in
# alerts.test.yml pass. That every metric the rules and the dashboard name exists on a node is
# ReferenceDocsTests' part (RoomcastServerTests).
set -euo pipefail
cd "$(dirname "$0")/../docs/operations/monitoring"
promtool check rules alerts.yml
promtool test rules alerts.test.yml
# The dashboard is JSON Grafana can import: a title, panels with queries.
jq -e '.title and (.panels | length > 0) and all(.panels[]; (.targets | length) > 0)' dashboard.json > /dev/null
