"""Screens pushed over the main one: help, input dialogs, kernel details."""
