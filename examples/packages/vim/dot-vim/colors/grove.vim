" a colour scheme shipped by the example package "vim"
