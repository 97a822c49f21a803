"""Placeholder; being written."""
