"""graphics problems: image filters on row-major float images."""
