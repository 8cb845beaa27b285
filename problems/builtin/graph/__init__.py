"""graph problems on dense adjacency matrices: shortest paths and minimum spanning trees, checked exactly."""
