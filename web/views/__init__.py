"""The browser UI's views, one small module per page."""
