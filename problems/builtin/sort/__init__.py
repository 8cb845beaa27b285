"""sort problems: integer sorts and key-value sorts, checked exactly."""
