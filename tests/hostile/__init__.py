"""Hostile-input tests: gpuplan on untrusted pull-request content (docs/security.md)."""
