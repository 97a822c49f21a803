"""Mechanisms."""
