"""convolution problems: 1-D, 2-D and 3-D 'same' convolutions, fused and multi-channel variants."""
