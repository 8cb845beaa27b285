"""pooling problems: average and max pooling over 1-D, 2-D and 3-D inputs."""
