"""Thin converters between PGN and other notations, one module per notation."""
